from django.db import models


class Trajectory(models.Model):
    """The raw log of one agent run and what was parsed from it."""

    format = models.CharField(max_length=40, blank=True)
    raw_log = models.FileField(upload_to="trajectories/%Y/%m/", blank=True)
    summary = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"trajectory {self.pk} ({self.format or 'unparsed'})"
