"""The catalogue itself: counts, completeness, and every task passing validation on CPU."""

import re
from collections import Counter

import pytest

from grader.taskspec import DEFAULT_CATALOG, iter_task_folders, load_task_folder
from tasks.validation import validate_task

FOLDERS = iter_task_folders(DEFAULT_CATALOG)
SPECS = {folder.name: load_task_folder(folder) for folder in FOLDERS}
MINIMUM_PER_CATEGORY = {
    "torch2cuda": 15,
    "torch2triton": 10,
    "triton2triton": 10,
    "cuda2cuda": 8,
    "hard": 8,
}


def test_catalogue_has_sixty_tasks_and_every_category_its_minimum():
    counts = Counter(spec.category for spec in SPECS.values())
    assert sum(counts.values()) >= 60, counts
    for category, minimum in MINIMUM_PER_CATEGORY.items():
        assert counts[category] >= minimum, (category, counts[category])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_task_is_complete(name):
    spec = SPECS[name]
    folder = spec.folder
    prompt = (folder / "PROMPT.md").read_text()
    assert len(spec.visible_shapes) >= 3
    assert spec.generalization, "every catalogue task is graded on unseen shapes"
    assert spec.forbidden_ops
    assert spec.slug in prompt
    # Helper variants (in-place forms, backward ops) may be summed up as "and their helpers".
    mentioned = [op for op in spec.forbidden_ops if op.removeprefix("aten::") in prompt]
    assert len(mentioned) * 2 >= len(spec.forbidden_ops), spec.forbidden_ops
    for shape in spec.visible_shapes:
        assert all(str(value) in prompt for value in shape.values()), shape
    visible_values = {value for shape in spec.visible_shapes for value in shape.values()}
    for dim, rule in spec.generalization["dims"].items():
        if rule["max"] not in visible_values and rule["max"] > 64:
            assert not re.search(rf"\b{rule['max']}\b", prompt), f"PROMPT.md reveals {dim}'s rule"
    for word in ("cpu_max", "generalization", "ARENA_HIDDEN_SEED"):
        assert word not in prompt
    if spec.category == "hard":
        assert (folder / "sota.py").is_file()
    if spec.category in ("triton2triton", "cuda2cuda"):
        assert (folder / "starter" / "solution.py").is_file()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_task_validates_on_cpu(name):
    report = validate_task(SPECS[name].folder)
    assert report.ok, report.problems


BASELINES = sorted((DEFAULT_CATALOG.parent / "baselines").glob("*.json"))


def _measured(path):
    import json

    return json.loads(path.read_text())["tasks"]


@pytest.mark.skipif(not BASELINES, reason="no GPU baselines committed")
@pytest.mark.parametrize("path", BASELINES, ids=[p.stem for p in BASELINES])
def test_gpu_baselines_are_current_and_in_their_time_window(path):
    """Measured by `python3 bench/catalog_gpu.py baselines tasks/baselines/<gpu>.json` on a
    lent GPU: re-measure after changing a task. A GPU's file may leave tasks out (the task page
    then says so); what it holds must match the catalogue as it is."""
    by_slug = {spec.slug: spec for spec in SPECS.values()}
    measured = _measured(path)
    stale = [
        slug
        for slug, entry in measured.items()
        if slug not in by_slug or entry.get("version") != by_slug[slug].version_hash
    ]
    assert not stale, f"re-measure baselines for {stale}"
    for slug, entry in measured.items():
        for row in entry["shapes"]:
            assert "error" not in row, (slug, row)
            assert row["eager_in_window"], (slug, row["shape"], row["eager_ms"])
            assert row.get("sota_correct", True), (slug, row["shape"], row.get("sota_reason"))


@pytest.mark.skipif(not BASELINES, reason="no GPU baselines committed")
def test_every_task_has_gpu_baselines_on_some_gpu():
    covered = set()
    for path in BASELINES:
        covered |= set(_measured(path))
    missing = sorted(spec.slug for spec in SPECS.values() if spec.slug not in covered)
    assert not missing, f"measure baselines for {missing}"
