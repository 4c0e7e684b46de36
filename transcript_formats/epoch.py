"""Times written as numbers since 1970 (seconds, or milliseconds past the year 2001)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

# Seconds since 1970 pass this in 2286; any larger stamp is taken as milliseconds.
_MILLISECONDS_FROM = 10_000_000_000


def iso_from_epoch(value: Any) -> str | None:
    """ISO 8601 (UTC, `Z`) of an epoch stamp, or None when it is no usable number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    seconds = value / 1000 if abs(value) >= _MILLISECONDS_FROM else value
    try:
        moment = datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat().replace("+00:00", "Z")
