from django.contrib import admin

from tasks.models import Task


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "category", "suite", "dtype", "regime", "is_active"]
    list_filter = ["category", "suite", "regime", "dtype", "is_active"]
    search_fields = ["slug", "title"]
    ordering = ["suite", "slug"]
    # The catalogue folder is the source of truth (sync_tasks); the admin only reads it,
    # except for retiring a task from new runs.
    readonly_fields = [
        "slug",
        "title",
        "category",
        "suite",
        "dtype",
        "regime",
        "folder",
        "version_hash",
        "manifest",
        "prompt",
        "created_at",
        "updated_at",
    ]
