import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from grader.formulas import FormulaError, formula_evaluate
from grader.roofline import floor_ms, peaks_for
from grader.taskspec import catalog_roots
from tasks.models import Task

BASELINES_DIR = Path(__file__).resolve().parent / "baselines"
ROOFLINE_GPUS = ("NVIDIA H100 80GB HBM3", "NVIDIA H200")


def task_get_active(*, slug: str) -> Task | None:
    return Task.objects.filter(slug=slug, is_active=True).first()


def catalog_dirs() -> list[Path]:
    """The catalogues this deployment reads: the source one, then the imported one."""
    return catalog_roots((settings.ARENA_CATALOG_DIR, settings.ARENA_IMPORTED_CATALOG_DIR))


def task_folder(*, task: Task) -> Path:
    """The task's folder, in the source catalogue or the imported one."""
    roots = catalog_dirs()
    return next(
        (r / task.folder for r in roots if (r / task.folder).is_dir()), roots[0] / task.folder
    )


def task_list(*, category: str = "", backend: str = "", suite: str = "") -> QuerySet[Task]:
    tasks = Task.objects.filter(is_active=True)
    if category:
        tasks = tasks.filter(category=category)
    if suite:
        tasks = tasks.filter(suite=suite)
    if backend:
        # Backends live in the manifest JSON; filtered here so SQLite and Postgres agree.
        slugs = [t.slug for t in tasks if backend in t.manifest.get("backends", [])]
        tasks = tasks.filter(slug__in=slugs)
    return tasks.order_by("category", "slug")


def task_suites() -> list[str]:
    """The suites of the active tasks (core, kernelbench, kernelbench-hard, ...), by name."""
    suites = Task.objects.filter(is_active=True).values_list("suite", flat=True)
    return sorted(set(suites))


def task_shape_rows(*, task: Task) -> list[dict[str, Any]]:
    """Per visible shape: the work, and the time each GPU's roofline allows for it."""
    manifest = task.manifest
    measured = _baselines_for(task)
    rows = []
    for index, shape in enumerate(manifest.get("visible_shapes", [])):
        try:
            flops = formula_evaluate(manifest["flops"], shape)
            bytes_moved = formula_evaluate(manifest["bytes"], shape)
        except (FormulaError, KeyError):
            flops = bytes_moved = 0.0
        floors = {}
        for name in ROOFLINE_GPUS:
            peaks = peaks_for(name)
            if peaks is not None:
                floors[peaks.name] = floor_ms(
                    dtype=task.dtype, flops=flops, bytes_moved=bytes_moved, peaks=peaks
                )
        rows.append(
            {
                "shape": shape,
                "gflop": flops / 1e9,
                "mbytes": bytes_moved / 1e6,
                "intensity": flops / bytes_moved if bytes_moved else None,
                "floors_ms": floors,
                "measured": [
                    (gpu, shapes[index]) for gpu, shapes in measured if index < len(shapes)
                ],
            }
        )
    return rows


def _baselines_for(task: Task) -> list[tuple[str, list[dict[str, Any]]]]:
    found = []
    for path in sorted(BASELINES_DIR.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        entry = data.get("tasks", {}).get(task.slug)
        if entry and entry.get("version") == task.version_hash:
            found.append((data.get("gpu", path.stem), entry["shapes"]))
    return found
