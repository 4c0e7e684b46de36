"""Reads of the transcripts app: a stored trajectory back as a Transcript, and its run context."""

from __future__ import annotations

import dataclasses
import gzip
import json
from typing import TYPE_CHECKING, Any

from transcripts.formats.schema import (
    Event,
    EventKind,
    MalformedLine,
    Thread,
    Transcript,
    Turn,
    Usage,
)
from transcripts.models import Trajectory
from transcripts.render import RunContext

if TYPE_CHECKING:
    from arena.models import Run
    from evaluator.models import Evaluation

_KINDS = {kind.value for kind in EventKind}
# Fields rebuilt from nested dicts by the functions below, not passed through.
_NESTED = {"threads", "malformed", "turns", "usage", "events"}
_FIELDS: dict[type, set[str]] = {}


def trajectory_transcript(*, trajectory: Trajectory) -> Transcript:
    """The normalized transcript stored beside the raw log (already redacted)."""
    with trajectory.normalized.open("rb") as stored:
        document = json.loads(gzip.decompress(stored.read()))
    return transcript_from_dict(document)


def transcript_from_dict(data: dict[str, Any]) -> Transcript:
    """The inverse of Transcript.to_dict(); keys a later schema dropped are ignored."""
    return Transcript(
        **_known(Transcript, data),
        threads=[_thread(t) for t in data.get("threads", [])],
        malformed=[MalformedLine(**_known(MalformedLine, m)) for m in data.get("malformed", [])],
    )


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = _FIELDS.setdefault(cls, {f.name for f in dataclasses.fields(cls)} - _NESTED)
    return {key: value for key, value in data.items() if key in names}


def _thread(data: dict[str, Any]) -> Thread:
    return Thread(**_known(Thread, data), turns=[_turn(t) for t in data.get("turns", [])])


def _turn(data: dict[str, Any]) -> Turn:
    usage = Usage(**_known(Usage, data["usage"])) if data.get("usage") else None
    events = [_event(e) for e in data.get("events", [])]
    return Turn(**_known(Turn, data), usage=usage, events=events)


def _event(data: dict[str, Any]) -> Event:
    fields = _known(Event, data)
    fields["kind"] = EventKind(fields["kind"] if fields.get("kind") in _KINDS else "unknown")
    return Event(**fields)


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
