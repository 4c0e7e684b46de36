"""torch.compile baselines cached per (task version, GPU, torch version, shape).

Compiling the reference takes tens of seconds per shape; its speed does not change between
evaluations on the same GPU and torch. The cache keeps the compiled time together with the eager
time measured beside it, so a later evaluation scales it by today's eager time: the reported
speedup stays a ratio taken in one run.
"""

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_path() -> Path:
    configured = os.environ.get("ARENA_BASELINE_CACHE")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "kernel-arena" / "baselines.json"


def baseline_key(*, task_version: str, gpu: str, torch_version: str, shape: dict[str, int]) -> str:
    material = json.dumps([task_version, gpu, torch_version, shape], sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def cache_load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cache_store(path: Path, entries: dict[str, Any]) -> None:
    if not entries:
        return
    data = cache_load(path)
    data.update(entries)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole and renamed, so a reader never sees half a file.
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as fh:
        json.dump(data, fh)
    os.replace(fh.name, path)
