"""The child's side of the private result channel: JSON lines on an inherited pipe."""

import json
import os
from typing import Any

_fd: int | None = None


def send(event: str, **fields: Any) -> None:
    global _fd
    if _fd is None:
        _fd = int(os.environ.pop("ARENA_CHANNEL_FD"))
    payload = json.dumps({"event": event, **fields}, default=str).encode() + b"\n"
    os.write(_fd, payload)
