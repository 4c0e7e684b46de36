"""Reads of the transcripts app: a stored trajectory back as a Transcript, and its run context."""

from __future__ import annotations

import gzip
import json
from typing import TYPE_CHECKING, Any

from transcripts.formats.schema import Transcript
from transcripts.models import Trajectory
from transcripts.render import RunContext

if TYPE_CHECKING:
    from arena.models import Run
    from evaluator.models import Evaluation


def trajectory_transcript(*, trajectory: Trajectory) -> Transcript:
    """The normalized transcript stored beside the raw log (already redacted)."""
    with trajectory.normalized.open("rb") as stored:
        document = json.loads(gzip.decompress(stored.read()))
    return Transcript.from_dict(document)


def transcript_run_context(*, run: Run, download_url: str, run_url: str) -> RunContext:
    """What the page shows beside the log: the agent, the task and the latest grading."""
    evaluation = _latest_evaluation(run)
    context = RunContext(
        agent=run.agent.name,
        task=f"{run.task.title} ({run.task.slug})",
        run_url=run_url,
        run_status=run.status,
        download_url=download_url,
    )
    if evaluation is not None:
        context.verdict = evaluation.status
        context.reward = evaluation.reward
        context.solution = evaluation.solution_code
        context.solution_name = evaluation.solution_name
        context.grader_log = grader_log(evaluation)
    return context


def _latest_evaluation(run: Run) -> Evaluation | None:
    submission = run.submissions.select_related("evaluation").order_by("-created_at").first()
    return submission.evaluation if submission is not None else None


def grader_log(evaluation: Evaluation) -> str:
    """The grading as text: status, each gate with its reason and error output, flags."""
    lines = [f"status: {evaluation.status}"]
    if evaluation.device:
        lines.append(f"device: {evaluation.device}")
    if evaluation.reward is not None:
        lines.append(f"reward: {evaluation.reward:.4f}")
    if evaluation.error:
        lines += ["", "error:", evaluation.error]
    result = evaluation.result if isinstance(evaluation.result, dict) else {}
    for name, gate in (result.get("gates") or {}).items():
        lines += ["", *_gate_lines(name, gate)]
    for flag in result.get("flags") or []:
        lines.append(f"flag: {json.dumps(flag, ensure_ascii=False)}")
    return "\n".join(lines)


def _gate_lines(name: str, gate: Any) -> list[str]:
    if not isinstance(gate, dict):
        return [f"{name}: {gate}"]
    passed = {True: "PASS", False: "FAIL"}.get(gate.get("passed"), "not run")
    lines = [f"{name}: {passed} {gate.get('reason') or ''}".rstrip()]
    detail = gate.get("detail") or {}
    for key in ("error", "log"):
        if isinstance(detail, dict) and detail.get(key):
            lines += [f"  {key}:", str(detail[key])]
    return lines
