"""Published runs of another benchmark brought in as runs of their agents, each solution graded
again by our grader, the benchmark's own result kept beside ours (ImportedRun.published).

KernelBench-Hard (a kernelbench.com checkout): `public/data/catalog.json` lists one cell per
(bench, GPU, model, problem) with the run id, outcome, peak-fraction score, audit verdict and
trace link; the solution is `public/runs/<run_id>_solution.py.txt` (or where the cell's
`solution_url` points under public/); `public/data/rundetail/<run_id>.json` names the harness.
A run id reads `<YYYYMMDD>_<HHMMSS>_<harness>_<model>_<problem>`.

Transcripts: the checkout publishes none (each cell links its trace on Hugging Face, kept as
`trace_url`). `imported_traces_attach` attaches them from a folder the user has: the traces
dataset's `<run_id>.jsonl` (upstream converts every harness's log into the Claude Code session
schema), or the run folder `<run_id>/` upstream's runner leaves (`codex_session.jsonl`, Grok's
`agent_home/.grok/sessions/**/chat_history.jsonl`, `transcript.jsonl`, richest first), each
parsed and stored as any uploaded log is. Each run is imported in its own transaction, once: its
(origin, run id) is unique, so a second import of the same checkout creates nothing. Nothing is
written into the checkout.
"""

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import IntegrityError, transaction

from arena.agent_names import NAME_MAX_CHARS, AgentNameRefused
from arena.lifecycle import submission_add
from arena.models import Agent, ImportedRun, Run
from arena.run_logs import run_trajectory_attach
from arena.services import agent_get_or_create
from evaluator.models import Evaluation
from evaluator.services import evaluation_create
from tasks.models import Task
from transcripts.services import TrajectoryRejected

ORIGIN = ImportedRun.Origin.KERNELBENCH_HARD
SUITE = "kernelbench-hard"
BENCH = "hard"  # the catalogue's bench of KernelBench-Hard's cells
CATALOG = Path("public/data/catalog.json")
RUNDETAIL = Path("public/data/rundetail")
RUNS = Path("public/runs")
SOLUTION_SUFFIX = "_solution.py.txt"
MAX_SOLUTION_BYTES = 1 << 20
_RUN_ID = re.compile(r"^(\d{8}_\d{6})_(.+)$")
# What a cell's own result is kept as, beside ours.
PUBLISHED_FIELDS = (
    "id",
    "bench",
    "gpu",
    "model",
    "problem",
    "correct",
    "score",
    "outcome",
    "failure_reason",
    "verdict",
    "trace_url",
    "solution_url",
    "elapsed_seconds",
)

Progress = Callable[[int, int, str], None]


class ImportRefused(Exception):
    """The folder is not a kernelbench.com checkout, or its catalogue cannot be read."""


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)  # run ids
    already: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "<run id>: why"
    other_benches: int = 0  # cells of kernelbench.com's other benches (mega, cuda): not ours

    def summary(self) -> str:
        return (
            f"{len(self.created)} runs imported and queued for grading, "
            f"{len(self.already)} already imported, {len(self.skipped)} skipped, "
            f"{self.other_benches} of other benches left out"
        )


@dataclass
class TraceReport:
    attached: list[str] = field(default_factory=list)  # run ids
    missing: list[str] = field(default_factory=list)  # no log for the run in the folder
    refused: list[str] = field(default_factory=list)  # "<run id>: why"

    def summary(self) -> str:
        return (
            f"transcripts: {len(self.attached)} attached, {len(self.missing)} without a log in "
            f"the folder, {len(self.refused)} refused"
        )


# In a run folder, the logs upstream's runner leaves, the richest first.
RUN_FOLDER_LOGS = ("codex_session.jsonl", "transcript.jsonl")
GROK_SESSIONS = Path("agent_home/.grok/sessions")


def trace_path(traces: Path, run_id: str) -> Path | None:
    """The log of `run_id` under `traces`, or None; never a path outside the folder."""
    root = traces.resolve()
    candidates = [traces / f"{run_id}.jsonl"]
    folder = traces / run_id
    if folder.is_dir():
        candidates.append(folder / RUN_FOLDER_LOGS[0])
        grok = folder / GROK_SESSIONS
        if grok.is_dir():
            candidates += sorted(
                grok.rglob("chat_history.jsonl"), key=lambda p: p.stat().st_size, reverse=True
            )
        candidates += [folder / name for name in RUN_FOLDER_LOGS[1:]]
    for path in candidates:
        resolved = path.resolve()
        if resolved.is_relative_to(root) and resolved.is_file() and resolved.stat().st_size:
            return resolved
    return None


def imported_traces_attach(
    *, traces: Path, gpu: str = "", progress: Progress | None = None
) -> TraceReport:
    """Attach a log from `traces` to every imported KernelBench-Hard run that has none yet
    (only `gpu`'s where given). Each log is stored with its run in one transaction or not at
    all: a log that cannot be read is reported and leaves its run as it was."""
    report = TraceReport()
    rows = ImportedRun.objects.filter(origin=ORIGIN, run__trajectory__isnull=True)
    if gpu:
        rows = rows.filter(run__task__slug__startswith=f"kbh-{gpu}-")
    rows = list(rows.select_related("run").order_by("external_id"))
    for done, row in enumerate(rows, 1):
        path = trace_path(traces, row.external_id)
        if path is None:
            report.missing.append(row.external_id)
        else:
            try:
                run_trajectory_attach(run=row.run, path=path)
            except TrajectoryRejected as exc:
                report.refused.append(f"{row.external_id}: {exc.message}")
            else:
                report.attached.append(row.external_id)
        if progress is not None:
            progress(done, len(rows), row.external_id)
    return report


def task_slug(gpu: str, problem: str) -> str:
    """The slug the KernelBench-Hard problem importer gives the problem on that GPU."""
    return re.sub(r"[^a-z0-9]+", "-", f"kbh-{gpu}-{problem}".lower()).strip("-")


def harness_and_model(run_id: str, *, model: str, problem: str) -> tuple[str, str]:
    """(harness, model) of a run id `<date>_<time>_<harness>_<model>_<problem>`, the model and
    problem known from the catalogue; where they do not fit, the first word is the harness."""
    match = _RUN_ID.match(run_id)
    rest = match.group(2) if match else run_id
    if problem and rest.endswith(f"_{problem}"):
        rest = rest[: -len(problem) - 1]
    if model and rest.endswith(f"_{model}"):
        return rest[: -len(model) - 1], model
    harness, _, tail = rest.partition("_")
    return harness, model or tail


def _read_catalog(root: Path) -> list[dict]:
    path = root / CATALOG
    if not path.is_file():
        raise ImportRefused(f"{root}: no {CATALOG}; is this a kernelbench.com checkout?")
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ImportRefused(f"{path}: unreadable catalogue ({exc})") from None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise ImportRefused(f"{path}: 'cells' is not a list of objects")
    return cells


def _rundetail(root: Path, run_id: str, gpu: str) -> dict:
    """The run's detail file: under rundetail/<gpu>/ in current checkouts, rundetail/ before."""
    for path in (root / RUNDETAIL / gpu / f"{run_id}.json", root / RUNDETAIL / f"{run_id}.json"):
        try:
            detail = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(detail, dict):
            return detail
    return {}


def as_model_new(code: str) -> str:
    """KernelBench-Hard's solutions name their module `Model`; our grader loads `ModelNew`. A
    solution that binds no ModelNew but defines a class Model gets `ModelNew = Model` appended,
    nothing else changed. One that does not parse is left as it is, for the compile gate."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            bound.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ImportFrom | ast.Import):
            bound |= {a.asname or a.name.split(".")[0] for a in node.names}
    if "ModelNew" in bound or "Model" not in bound:
        return code
    alias = "# Imported from KernelBench-Hard: its class Model, by our name.\nModelNew = Model\n"
    return code.rstrip("\n") + "\n\n\n" + alias


def _solution_path(root: Path, cell: dict, run_id: str) -> Path | None:
    """The published solution, inside the checkout's public/ folder; None when there is none."""
    public = (root / "public").resolve()
    candidates = []
    url = cell.get("solution_url")
    if isinstance(url, str) and url.startswith("/"):
        candidates.append(public / url.lstrip("/"))
    candidates.append(root / RUNS / f"{run_id}{SOLUTION_SUFFIX}")
    gpu = str(cell.get("gpu", ""))
    if gpu:
        candidates.append(root / RUNS / gpu / f"{run_id}{SOLUTION_SUFFIX}")
    for path in candidates:
        resolved = path.resolve()
        if resolved.is_relative_to(public) and resolved.is_file():
            return resolved
    return None


def kernelbench_hard_runs_import(
    *, source: Path, gpu: str = "", progress: Progress | None = None
) -> ImportReport:
    """Import the published runs of a kernelbench.com checkout (only `gpu`'s where given)."""
    cells = [c for c in _read_catalog(source) if not gpu or str(c.get("gpu", "")).lower() == gpu]
    report = ImportReport()
    ours = [c for c in cells if c.get("bench", BENCH) == BENCH]
    report.other_benches = len(cells) - len(ours)
    cells = ours
    for done, cell in enumerate(cells, 1):
        run_id = str(cell.get("run_id") or "")
        outcome = _import_cell(source, cell, run_id, report) if run_id else "no run id"
        if outcome:
            report.skipped.append(f"{run_id or cell.get('id', '?')}: {outcome}")
        if progress is not None:
            progress(done, len(cells), run_id)
    return report


def _import_cell(root: Path, cell: dict, run_id: str, report: ImportReport) -> str:
    """Import one cell; the reason it was skipped, or "" once imported (or found imported)."""
    if ImportedRun.objects.filter(origin=ORIGIN, external_id=run_id).exists():
        report.already.append(run_id)
        return ""
    problem, gpu = str(cell.get("problem", "")), str(cell.get("gpu", ""))
    slug = task_slug(gpu, problem)
    task = Task.objects.filter(slug=slug).first()
    if task is None:
        return f"no task {slug} (import the KernelBench-Hard problems first)"
    if cell.get("has_solution") is False:
        return "no solution published"
    path = _solution_path(root, cell, run_id)
    if path is None:
        return "solution file missing from the checkout"
    if path.stat().st_size > MAX_SOLUTION_BYTES:
        return "solution larger than 1 MiB"
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"solution unreadable ({exc})"
    detail = _rundetail(root, run_id, str(cell.get("gpu", "")))
    harness, model = harness_and_model(run_id, model=str(cell.get("model", "")), problem=problem)
    harness = str(detail.get("harness") or harness)
    published = {key: cell[key] for key in PUBLISHED_FIELDS if key in cell}
    for key in ("trace_url", "solution_url"):  # shown as links: only a web address stays
        if not str(published.get(key, "")).startswith(("https://", "/")):
            published.pop(key, None)
    try:
        with transaction.atomic():
            agent = _agent(harness=harness, model=model)
            run = Run.objects.create(
                agent=agent,
                task=task,
                status=Run.Status.EVALUATING,
                source=Run.Source.IMPORTED,
                model=model,
                duration_s=_number(cell.get("elapsed_seconds")),
            )
            ImportedRun.objects.create(
                run=run, origin=ORIGIN, external_id=run_id, published=published
            )
            evaluation = evaluation_create(
                task=task, solution_name="solution.py", solution_code=as_model_new(code)
            )
            submission_add(run=run, evaluation=evaluation)
    except IntegrityError:  # imported at the same moment by another process
        report.already.append(run_id)
        return ""
    except AgentNameRefused as exc:  # e.g. an account's agent looks like it
        return f"agent {harness} {model}: {exc.message}"
    report.created.append(run_id)
    return ""


def _agent(*, harness: str, model: str) -> Agent:
    """The platform agent of this harness and model (created on first use)."""
    return agent_get_or_create(
        name=f"{harness} {model}"[:NAME_MAX_CHARS],
        defaults={"harness": harness[:50], "model": model[:100]},
    )


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# --- comparison --------------------------------------------------------------------------------


@dataclass
class Comparison:
    run: Run
    external_id: str
    ours_passed: bool
    ours_reason: str
    theirs_passed: bool
    theirs_reason: str

    @property
    def agrees(self) -> bool:
        return self.ours_passed == self.theirs_passed


def theirs_verdict(published: dict) -> tuple[bool, str]:
    """Whether the benchmark counted the run as passing, and its reason: outcome "pass", correct,
    and not rejected by its audit (verdict "bug" or "fail")."""
    outcome = str(published.get("outcome", ""))
    verdict = str(published.get("verdict", ""))
    passed = (
        outcome == "pass" and published.get("correct") is not False and verdict not in _REJECTED
    )
    reason = f"outcome {outcome or '?'}"
    failure = str(published.get("failure_reason", ""))
    if failure and failure != outcome:
        reason += f" ({failure})"
    if verdict:
        reason += f", audit {verdict}"
    if published.get("score") is not None:
        reason += f", peak fraction {published['score']}"
    return passed, reason


_REJECTED = ("bug", "fail")


def ours_verdict(evaluation: Evaluation) -> tuple[bool, str]:
    """Whether our grader passed the solution, and why not (the first failed gate's reason)."""
    result = evaluation.result or {}
    if evaluation.status == Evaluation.Status.PASSED:
        flags = [f.get("code", "") for f in result.get("flags") or [] if isinstance(f, dict)]
        return True, "passed" + (f", flagged {', '.join(flags)}" if flags else "")
    for name, gate in (result.get("gates") or {}).items():
        if isinstance(gate, dict) and gate.get("passed") is False:
            return False, f"{evaluation.status}: {name}: {gate.get('reason', '')}".rstrip(": ")
    return False, f"{evaluation.status}: {evaluation.error or 'no reason recorded'}"


def imported_runs_compare(*, origin: str = ORIGIN, gpu: str = "") -> list[Comparison]:
    """Every imported run whose latest grading has finished, our verdict beside theirs."""
    rows = []
    imported = ImportedRun.objects.filter(origin=origin).select_related("run__task")
    for row in imported.order_by("external_id"):
        if gpu and str(row.published.get("gpu", "")).lower() != gpu:
            continue
        submission = row.run.submissions.select_related("evaluation").order_by("-pk").first()
        if submission is None or not submission.evaluation.is_finished:
            continue
        ours = ours_verdict(submission.evaluation)
        theirs = theirs_verdict(row.published)
        rows.append(Comparison(row.run, row.external_id, *ours, *theirs))
    return rows
