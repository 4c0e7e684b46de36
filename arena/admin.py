from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm

from arena.agent_names import AgentNameRefused
from arena.models import Agent, Run, Submission
from arena.moderation import HIDDEN_REASON_MAX, run_visibility_set
from arena.services import agent_name_check, agent_name_set
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


class AgentAdminForm(forms.ModelForm):
    """An agent's name is refused here as anywhere else: another agent's, or looking like it."""

    class Meta:
        model = Agent
        fields = ["name"]  # the admin adds the fields it shows

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if self.instance.pk is not None and "name" not in self.changed_data:
            return name  # an older agent's name, kept as it is, may predate the rules
        try:
            agent_name_check(name=name, agent=self.instance)
        except AgentNameRefused as exc:
            raise forms.ValidationError(exc.message) from None
        return name


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    form = AgentAdminForm
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
    # Made from the name when the agent is; kept when it is renamed, so that its URLs stay.
    readonly_fields = ["slug"]

    def save_model(self, request, obj: Agent, form, change: bool) -> None:
        if change and "name" not in form.changed_data:
            super().save_model(request, obj, form, change)
        else:
            agent_name_set(agent=obj, name=form.cleaned_data["name"])


class SubmissionInline(admin.TabularInline):
    model = Submission
    extra = 0
    can_delete = False
    fields = [
        "evaluation",
        "kernel_source",
        "kernel_path",
        "kernel_turn",
        "kernel_tool",
        "created_at",
    ]
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
    list_display = ["id", "run", "evaluation", "kernel_source", "created_at"]
    list_filter = ["evaluation__status", "kernel_source", "run__task__category"]
    search_fields = ["run__agent__slug", "run__task__slug"]
    list_select_related = ["run__agent", "run__task", "evaluation__task"]
    # Newest first by primary key: indexed, unlike created_at, and the same order.
    ordering = ["-pk"]
    raw_id_fields = ["run", "evaluation"]
