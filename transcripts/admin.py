from django.contrib import admin

from transcripts.models import Trajectory


@admin.register(Trajectory)
class TrajectoryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "format",
        "filename",
        "turn_count",
        "tool_call_count",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "created_at",
    ]
    list_filter = ["format", "cost_computed"]
    search_fields = ["filename", "sha256", "run__agent__slug", "run__task__slug"]
    date_hierarchy = "created_at"
    readonly_fields = ["raw_log", "normalized", "sha256", "size_bytes", "summary", "created_at"]
