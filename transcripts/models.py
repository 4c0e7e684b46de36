from django.db import models


class Trajectory(models.Model):
    """The raw log of one agent run and what was parsed from it.

    Both files are gzipped and both are stored after secrets were redacted: `raw_log` is the
    log as uploaded (a zipped folder is kept as an uncompressed zip inside the gzip), and
    `normalized` is the parsed transcript as JSON, which the page renders without re-parsing.
    """

    format = models.CharField(max_length=40, blank=True)
    filename = models.CharField(max_length=255, blank=True)
    raw_log = models.FileField(upload_to="trajectories/%Y/%m/", blank=True)
    normalized = models.FileField(upload_to="trajectories/%Y/%m/", blank=True)
    sha256 = models.CharField(max_length=64, blank=True)  # of the upload as received
    size_bytes = models.BigIntegerField(default=0)  # of the upload as received
    event_count = models.PositiveIntegerField(default=0)
    turn_count = models.PositiveIntegerField(default=0)
    tool_call_count = models.PositiveIntegerField(default=0)
    file_change_count = models.PositiveIntegerField(default=0)
    subagent_count = models.PositiveIntegerField(default=0)
    malformed_line_count = models.PositiveIntegerField(default=0)
    # Tokens of every model call, subagents included; input excludes the cached part.
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(null=True, blank=True)
    cost_computed = models.BooleanField(default=False)  # priced from our table, not the log
    duration_s = models.FloatField(null=True, blank=True)
    # Model, CLI version, notes and the first malformed lines (file, line, reason), for listings
    # and the API.
    summary = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"trajectory {self.pk} ({self.format or 'unparsed'})"
