from django.contrib import admin

from evaluator.models import Evaluation, EvaluationShape


class GpuListFilter(admin.SimpleListFilter):
    """The device an evaluation ran on, by name as the grader recorded it ("cpu" for CPU)."""

    title = "GPU"
    parameter_name = "gpu"
    # The path from the listed model to its evaluation ("" when listing evaluations).
    evaluation_path = ""

    # GPU names come from the latest evaluations only: a DISTINCT over every stored result
    # reads each one's JSON (most of a second at 100,000 rows), and GPU kinds change rarely.
    recent = 2000

    def lookups(self, request, model_admin):
        latest = Evaluation.objects.filter(device="cuda").order_by("-pk")[: self.recent]
        names = set(latest.values_list("result__environment__gpu", flat=True))
        return [("cpu", "cpu"), *sorted((name, name) for name in names if name)]

    def queryset(self, request, queryset):
        value = self.value()
        if not value:
            return queryset
        if value == "cpu":
            return queryset.filter(**{f"{self.evaluation_path}device": "cpu"}).distinct()
        lookup = f"{self.evaluation_path}result__environment__gpu"
        return queryset.filter(**{lookup: value}).distinct()


def is_changelist(request) -> bool:
    match = getattr(request, "resolver_match", None)
    return bool(match and match.url_name and match.url_name.endswith("_changelist"))


class EvaluationShapeInline(admin.TabularInline):
    model = EvaluationShape
    extra = 0
    can_delete = False
    fields = [
        "index",
        "shape",
        "seen",
        "correct",
        "reason",
        "candidate_median_ms",
        "eager_ms",
        "roofline_fraction",
    ]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "task",
        "status",
        "device",
        "ranked",
        "reward",
        "attempts",
        "created_at",
        "finished_at",
    ]
    list_filter = ["status", "ranked", "device", GpuListFilter, "task__category"]
    search_fields = ["task__slug", "solution_sha256", "submission__run__agent__slug"]
    list_select_related = ["task"]
    # Newest first by primary key: indexed, unlike created_at, and the same order.
    ordering = ["-pk"]
    date_hierarchy = "created_at"
    raw_id_fields = ["task"]

    def get_queryset(self, request):
        evaluations = super().get_queryset(request)
        if is_changelist(request):
            # The list shows none of the big columns; reading them costs the page its speed.
            evaluations = evaluations.defer("solution_code", "result", "task__manifest")
        return evaluations

    inlines = [EvaluationShapeInline]
    # A verdict is the grader's; the admin shows it and never edits it.
    readonly_fields = [
        "task",
        "task_version",
        "solution_name",
        "solution_sha256",
        "solution_code",
        "status",
        "device",
        "reward",
        "ranked",
        "result",
        "error",
        "attempts",
        "lease_expires_at",
        "created_at",
        "started_at",
        "finished_at",
    ]
