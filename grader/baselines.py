"""The judge's baselines cached per (task version, GPU, torch, triton, shape).

Compiling the reference takes tens of seconds per shape, and the judge's eager timing a second
more; neither changes between evaluations on the same GPU model and libraries. The cache keeps
the judge's eager time (and how it was timed: from graphs or plain launches) with the compiled
time measured beside it. A later evaluation whose candidate was timed the same way takes both
from here, and its judge times nothing: the eager time beside the candidate is still measured
every time and cross-checked against the cached one, and the compiled time is scaled by it, so
the reported speedups stay ratios taken in one run. The cache lives on the judge's side (the
grading process's home or ARENA_BASELINE_CACHE), never where a candidate can reach it.
"""

import fcntl
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def baseline_key(
    *, task_version: str, gpu: str, torch_version: str, triton_version: str, shape: dict[str, int]
) -> str:
    material = json.dumps([task_version, gpu, torch_version, triton_version, shape], sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def usable(cached: dict[str, Any] | None, *, graphs: bool, want_compile: bool) -> bool:
    """Whether a cached entry stands for the judge's timing of a shape whose candidate was timed
    from graphs (or not): the same method, and the compiled time where one is wanted."""
    if not cached or not cached.get("eager_ms") or bool(cached.get("graphs")) != graphs:
        return False
    return bool(cached.get("compile_ms")) or not want_compile


def needs_timing(
    cached: dict[str, Any] | None, *, graphs: bool, want_compile: bool, sota: bool
) -> bool:
    """Whether the judge times a visible shape's baselines: a task's SOTA always, else where
    the cache holds none usable (the judge's rule, and the grading process's guess of it)."""
    return sota or not usable(cached, graphs=graphs, want_compile=want_compile)


def compile_cached(
    path: Path,
    *,
    task_version: str,
    gpu: str,
    torch_version: str,
    triton_version: str,
    shapes: list[dict[str, int]],
) -> bool:
    """Whether the cache at `path` holds the compiled time of every one of `shapes` (the visible
    ones), so that no judge of this task compiles the reference (roles/judge.py): a command
    line's warm-up of the compile would be work for nothing (launch.py)."""
    if not shapes or not gpu or not torch_version:
        return False
    cache = cache_load(path)
    for shape in shapes:
        key = baseline_key(
            task_version=task_version,
            gpu=gpu,
            torch_version=torch_version,
            triton_version=triton_version,
            shape=shape,
        )
        entry = cache.get(key)
        if not isinstance(entry, dict) or not entry.get("compile_ms") or not entry.get("eager_ms"):
            return False
    return True


def cache_load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cache_store(path: Path, entries: dict[str, Any]) -> None:
    """`entries` added to the cache at `path`. The grading processes of one GPU worker share its
    caches (a worker of concurrency N, evaluations_per_gpu): each read, merge and write is
    done under an exclusive lock of a file beside the cache, so that two processes storing at
    once both keep their entries. The lock is flock's: let go by the kernel if its holder
    dies."""
    if not entries:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = cache_load(path)
        data.update(entries)
        # Written whole and renamed, so a reader never sees half a file.
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as fh:
            json.dump(data, fh)
        os.replace(fh.name, path)
