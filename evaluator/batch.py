"""Grading a folder of solutions against a suite, one JSON line per result, resumable.

Solutions are matched to the suite's tasks by where they lie under the folder:
- `<slug>.py`, or any `.py` file under `<slug>/` (several solutions of one task);
- for KernelBench tasks also upstream's names: `level1/19_ReLU.py`, any file under
  `level1/19_ReLU/`, and KernelBench's generated `level_1_problem_19_sample_0_kernel.py`.
A file that matches no task is listed, never graded against a guess.

The results file is appended to and flushed after every result, so a killed run loses at most
the evaluation it was in. A second run over the same file grades only what it lacks: a pair
(task, solution file, its sha256) with a verdict is skipped; one whose last line is a grader
error is graded again (the grader's failure says nothing of the solution).
"""

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evaluator.services import grader_options
from grader import EvaluateOptions, TaskError, evaluate
from tasks.importers.kernelbench import kernelbench_slug
from tasks.models import Task
from tasks.selectors import task_folder

GENERATED_NAME = re.compile(r"level_(\d+)_problem_(\d+)_sample_\d+")
LEVEL_FOLDER = re.compile(r"level\d+")

Progress = Callable[[int, int, dict[str, Any]], None]


@dataclass(frozen=True)
class Pair:
    task: Task
    solution: Path
    name: str  # the solution's path under the folder
    sha256: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.task.slug, self.name, self.sha256)


@dataclass
class SuiteReport:
    pairs: int = 0
    skipped: int = 0  # graded by an earlier run into the same file
    graded: list[dict[str, Any]] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for line in self.graded:
            counts[line["status"]] = counts.get(line["status"], 0) + 1
        statuses = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none"
        ranked = sum(1 for line in self.graded if line.get("ranked"))
        rate = len(self.graded) / self.wall_s * 3600 if self.wall_s and self.graded else 0.0
        return (
            f"{self.pairs} solutions: {len(self.graded)} graded ({statuses}; {ranked} ranked), "
            f"{self.skipped} already in the results file, {len(self.unmatched)} matched no task; "
            f"{self.wall_s:.0f} s, {rate:.0f} evaluations an hour"
        )


def suite_pairs(tasks: Iterable[Task], folder: Path) -> tuple[list[Pair], list[str]]:
    """(task, solution) pairs in task order, and the files that matched no task."""
    by_slug = {task.slug: task for task in tasks}
    by_problem = {
        match.groups(): slug
        for slug in by_slug
        if (match := re.match(r"kernelbench-level(\d+)-(\d+)-", slug))
    }
    matched: dict[str, list[tuple[str, Path]]] = {}
    unmatched: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        name = path.relative_to(folder).as_posix()
        slug = _slug_for(path.relative_to(folder), by_slug, by_problem)
        if slug is None:
            unmatched.append(name)
        else:
            matched.setdefault(slug, []).append((name, path))
    pairs = [
        Pair(by_slug[slug], path, name, hashlib.sha256(path.read_bytes()).hexdigest())
        for slug in sorted(matched)
        for name, path in matched[slug]
    ]
    return pairs, unmatched


def _slug_for(
    relative: Path, by_slug: dict[str, Task], by_problem: dict[tuple[str, str], str]
) -> str | None:
    parts = relative.parts
    if len(parts) > 1 and parts[0] in by_slug:
        return parts[0]
    if len(parts) == 1 and relative.stem in by_slug:
        return relative.stem
    if len(parts) >= 2 and LEVEL_FOLDER.fullmatch(parts[0]):
        problem = Path(parts[1]) if len(parts) > 2 else relative.relative_to(parts[0])
        slug = kernelbench_slug(parts[0], problem.with_suffix(".py"))
        if slug in by_slug:
            return slug
    generated = GENERATED_NAME.search(relative.name)
    if generated:
        return by_problem.get(generated.groups())
    return None


def results_done(out: Path) -> set[tuple[str, str, str]]:
    """The pairs the results file holds a verdict for. A last line cut short by a kill is
    dropped from the file, so the next line starts clean."""
    if not out.is_file():
        return set()
    raw = out.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    if len(complete) != len(raw):
        with out.open("r+b") as fh:
            fh.truncate(len(complete))
    last: dict[tuple[str, str, str], str] = {}
    for text in complete.decode("utf-8", errors="replace").splitlines():
        try:
            line = json.loads(text)
            last[(line["task"], line["solution"], line["solution_sha256"])] = line["status"]
        except (ValueError, KeyError, TypeError):
            continue  # a line that is not ours is left where it is and not counted
    return {key for key, status in last.items() if status != "error"}


def grade_suite(
    *,
    tasks: Iterable[Task],
    folder: Path,
    out: Path,
    device: str,
    options: EvaluateOptions | None = None,
    progress: Progress | None = None,
) -> SuiteReport:
    started = time.monotonic()
    pairs, unmatched = suite_pairs(tasks, folder)
    done = results_done(out)
    todo = [pair for pair in pairs if pair.key not in done]
    report = SuiteReport(pairs=len(pairs), skipped=len(pairs) - len(todo), unmatched=unmatched)
    options = options or grader_options()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as fh:
        for index, pair in enumerate(todo, start=1):
            line = _grade_pair(pair, device, options)
            fh.write(json.dumps(line) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            report.graded.append(line)
            if progress is not None:
                progress(index, len(todo), line)
    report.wall_s = time.monotonic() - started
    return report


def _grade_pair(pair: Pair, device: str, options: EvaluateOptions) -> dict[str, Any]:
    line: dict[str, Any] = {
        "task": pair.task.slug,
        "solution": pair.name,
        "solution_sha256": pair.sha256,
        "graded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    started = time.monotonic()
    try:
        result = evaluate(task_folder(task=pair.task), pair.solution, device, options)
    except (TaskError, OSError, ValueError) as exc:
        # The grader could not run (a missing task folder, a full disk): its failure, kept
        # as "error" so that a later run grades the pair again.
        return {
            **line,
            "status": "error",
            "ranked": False,
            "reason": f"the grader could not run: {exc}",
            "wall_s": round(time.monotonic() - started, 3),
        }
    data = result.to_dict()
    data.pop("log", None)
    return {**line, **verdict_line(data), "result": data}


def verdict_line(data: dict[str, Any]) -> dict[str, Any]:
    """A result's verdict in one JSON line's fields (EvalResult.to_dict() -> status, ranked,
    reward, speedup, flags, the first reason, wall time): grade_suite's and the batch API's."""
    return {
        "status": data["status"],
        "ranked": data["ranked"],
        "reward": data["reward"],
        "speedup_vs_eager": data["summary"].get("speedup_vs_eager"),
        "flags": [flag["code"] for flag in data["flags"]],
        "reason": _first_reason(data),
        "wall_s": data["wall_s"],
    }


def _first_reason(data: dict[str, Any]) -> str:
    """What failed, in gate order: the first gate that did not pass, or "" for a pass."""
    for gate in data["gates"].values():
        if gate["passed"] is False or (gate["passed"] is None and "error" in gate["reason"]):
            return str(gate["reason"])
    return ""
