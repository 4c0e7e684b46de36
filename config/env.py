"""Typed readers for settings that come from the environment.

Each helper fails loudly on a value it cannot parse, so a typo in a deployment's environment
stops the process at start-up instead of silently running with a default.
"""

import contextlib
import os
import secrets
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (compared without case or surrounding blanks); anything else stops
    start-up naming the variable and what it may be."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is not one of {', '.join(choices)}")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}")
    return value


def env_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name)
    return Path(raw).expanduser().resolve() if raw else default


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


_RATE_UNIT_S = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_RATE_UNIT_S |= {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def env_rate(name: str, default: str) -> tuple[int, int] | None:
    """A rate written `<count>/<second|minute|hour|day>` ("10/hour", "60/min") as (count,
    seconds); empty turns the limit off (None)."""
    raw = os.environ.get(name, default).strip()
    if not raw:
        return None
    count, _, unit = raw.partition("/")
    if not count.strip().isdigit() or int(count) < 1 or unit.strip() not in _RATE_UNIT_S:
        raise ImproperlyConfigured(
            f"{name}={raw!r} is not a rate like 10/hour (<count>/<second|minute|hour|day>)"
        )
    return int(count), _RATE_UNIT_S[unit.strip()]


def local_secret_key(path: Path, *, create: bool) -> str:
    """The key kept in `path` (mode 0600); made there first where `create` is set. "" where
    there is none, or where it cannot be written. The file appears whole or not at all."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    if not create:
        return ""
    try:
        fd, draft = tempfile.mkstemp(prefix=".secret-key-", dir=path.parent)
    except OSError:
        return ""
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:  # mkstemp makes it 0600
            fh.write(secrets.token_urlsafe(50) + "\n")
        # Where another process made it first, theirs is the key.
        with contextlib.suppress(FileExistsError):
            os.link(draft, path)
    finally:
        os.unlink(draft)
    return path.read_text(encoding="utf-8").strip()
