from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm

from arena.models import Agent, Run, Submission
from arena.moderation import HIDDEN_REASON_MAX, run_visibility_set
from evaluator.admin import GpuListFilter, is_changelist


class RunGpuListFilter(GpuListFilter):
    evaluation_path = "submissions__evaluation__"


class ModerationActionForm(ActionForm):
    """The action bar of the run list, with room for why a run is hidden."""

    reason = forms.CharField(
        max_length=HIDDEN_REASON_MAX,
        required=False,
        label="Reason",
        help_text="shown to moderators; needed to hide",
    )


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "owner",
        "organisation",
        "harness",
        "model",
        "effort",
        "cli_version",
        "created_at",
    ]
    list_filter = ["harness", "model", "effort", "organisation"]
    search_fields = ["slug", "name", "model", "harness", "owner__username"]
    list_select_related = ["owner", "organisation"]
    raw_id_fields = ["owner"]
    prepopulated_fields = {"slug": ["name"]}


class SubmissionInline(admin.TabularInline):
    model = Submission
    extra = 0
    can_delete = False
    fields = ["evaluation", "created_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "agent",
        "task",
        "status",
        "failure_reason",
        "source",
        "created_by",
        "hidden",
        "cost_usd",
        "created_at",
    ]
    list_filter = [
        "status",
        "hidden",
        "failure_reason",
        "source",
        "task__category",
        RunGpuListFilter,
        "agent",
    ]
    search_fields = [
        "agent__slug",
        "agent__name",
        "task__slug",
        "hidden_reason",
        "created_by__username",
    ]
    list_select_related = ["agent", "task", "created_by"]
    # Newest first by primary key: indexed, unlike created_at, and the same order.
    ordering = ["-pk"]
    date_hierarchy = "created_at"
    raw_id_fields = ["agent", "task", "trajectory", "created_by"]
    inlines = [SubmissionInline]
    # Visibility changes only through the actions, which also drop the public caches.
    readonly_fields = ["hidden", "hidden_reason", "created_at"]
    action_form = ModerationActionForm
    actions = ["hide_from_public_pages", "show_on_public_pages"]

    def get_queryset(self, request):
        runs = super().get_queryset(request)
        if is_changelist(request):
            runs = runs.defer("failure_detail", "task__manifest", "task__prompt")
        return runs

    @admin.action(description="Hide from public pages (give a reason)")
    def hide_from_public_pages(self, request, queryset) -> None:
        reason = request.POST.get("reason", "").strip()
        if not reason:
            self.message_user(request, "Give a reason to hide runs.", messages.ERROR)
            return
        changed = run_visibility_set(runs=queryset, hidden=True, reason=reason)
        self.message_user(request, f"{changed} run(s) hidden from public pages.")

    @admin.action(description="Show on public pages")
    def show_on_public_pages(self, request, queryset) -> None:
        changed = run_visibility_set(runs=queryset, hidden=False)
        self.message_user(request, f"{changed} run(s) shown on public pages again.")


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "evaluation", "created_at"]
    list_filter = ["evaluation__status", "run__task__category"]
    search_fields = ["run__agent__slug", "run__task__slug"]
    list_select_related = ["run__agent", "run__task", "evaluation__task"]
    # Newest first by primary key: indexed, unlike created_at, and the same order.
    ordering = ["-pk"]
    raw_id_fields = ["run", "evaluation"]
