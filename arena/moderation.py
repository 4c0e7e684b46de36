"""Moderation: hiding a run keeps it in the database and the admin, off every public page."""

from django.db import transaction
from django.db.models import QuerySet

from arena.models import Run

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
            transaction.on_commit(_public_caches_invalidate)
    return changed


def _public_caches_invalidate() -> None:
    # The leaderboard sits a layer above runs: reached lazily, and only if it is installed.
    try:
        from leaderboard.services import leaderboard_invalidate
    except ImportError:
        return
    leaderboard_invalidate()
