from django.contrib import admin

from accounts.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Operators see and revoke (delete) tokens here. Tokens are made by their owners on
    /accounts/tokens/ or with `manage.py token_create`, where the secret can be shown once."""

    list_display = ("name", "user", "prefix", "created", "last_used")
    list_filter = ("created", "last_used")
    search_fields = ("name", "prefix", "user__username", "user__email")
    list_select_related = ("user",)
    readonly_fields = ("user", "name", "prefix", "digest", "created", "last_used")
    ordering = ("-created",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
