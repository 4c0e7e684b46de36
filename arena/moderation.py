"""Moderation: hiding a run keeps it in the database and the admin, off every public page."""

from django.db import transaction
from django.db.models import QuerySet

from arena.models import Run
from arena.run_scores import leaderboard_invalidate

HIDDEN_REASON_MAX = Run._meta.get_field("hidden_reason").max_length


def run_visibility_set(*, runs: QuerySet, hidden: bool, reason: str = "") -> int:
    """Hide (with a reason) or show runs; the public caches are dropped once this commits.

    Returns how many runs changed.
    """
    reason = reason.strip()[:HIDDEN_REASON_MAX] if hidden else ""
    with transaction.atomic():
        changed = runs.exclude(hidden=hidden, hidden_reason=reason).update(
            hidden=hidden, hidden_reason=reason
        )
        if changed:
            transaction.on_commit(leaderboard_invalidate)
    return changed
