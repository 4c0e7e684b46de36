"""`claude -p --output-format stream-json --verbose`: one JSON event per line on stdout.

Messages have the Anthropic shape of the session files; a subagent's messages carry the id of
the Task/Agent call that spawned it in `parent_tool_use_id`. The last record, `result`, holds
the run's cost (total_cost_usd), duration and turn count; `subtype: success` with
`is_error: true` is still an error (e.g. an API error the CLI reported as the answer).
"""

from __future__ import annotations

from typing import Any

from .anthropic_messages import Shared, ThreadBuilder, spawn, usage_from
from .claude_code import add_record
from .finish import finish_transcript
from .records import (
    RECORD_ERRORS,
    SourceFile,
    as_str,
    iter_jsonl,
    record_not_understood,
    unknown_event,
)
from .schema import EventKind, Thread, Transcript, Usage

FORMAT = "claude-code-stream-json"
_SILENT_TYPES = frozenset({"stream_event", "rate_limit_event", "keep_alive"})


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    shared = Shared()
    main = Thread(id="main", kind="main")
    transcript.threads.append(main)
    builders: dict[str | None, ThreadBuilder] = {None: ThreadBuilder(main, shared)}
    result_usage: Usage | None = None
    for source in files:
        for line, record in iter_jsonl(source, transcript.malformed):
            if record.get("type") == "result":
                result_usage = usage_from(record.get("usage"))
            try:
                _record(transcript, builders, shared, record, line)
            except RECORD_ERRORS as exc:
                record_not_understood(transcript.malformed, source.name, line, exc)
    _usage_from_result(transcript, result_usage)
    for parent_call, builder in builders.items():
        if parent_call is None:
            continue
        transcript.threads.append(builder.thread)
        site = shared.calls.get(parent_call)
        if site is not None:
            spawn(builder.thread, site, shared)
        else:
            builder.thread.parent_thread = "main"
    return finish_transcript(transcript)


def _record(
    transcript: Transcript,
    builders: dict[str | None, ThreadBuilder],
    shared: Shared,
    record: dict[str, Any],
    line: int,
) -> None:
    kind = record.get("type")
    if kind == "system" and record.get("subtype") == "init":
        transcript.session_id = transcript.session_id or as_str(record.get("session_id"))
        transcript.model = transcript.model or as_str(record.get("model"))
        transcript.cwd = transcript.cwd or as_str(record.get("cwd"))
        transcript.cli_version = transcript.cli_version or as_str(record.get("claude_code_version"))
        shared.files.cwd = transcript.cwd
        return
    if kind == "result":
        _result(transcript, builders[None], record, line)
        return
    if kind in _SILENT_TYPES:
        return
    parent = record.get("parent_tool_use_id")
    builder = builders.get(parent) if parent else builders[None]
    if builder is None:
        thread = Thread(id=f"task-{parent}", kind="subagent")
        builder = builders[parent] = ThreadBuilder(thread, shared)
    if kind in ("assistant", "user", "system"):
        if "tool_use_result" in record and "toolUseResult" not in record:
            record = {**record, "toolUseResult": record["tool_use_result"]}
        add_record(builder, record, line)
    else:
        builder.current_turn(None).events.append(unknown_event(shared.ids, record, str(kind), line))


def _usage_from_result(transcript: Transcript, usage: Usage | None) -> None:
    """Runs whose messages carry no usage still have the result's total; put it on the last turn."""
    if usage is None or usage.total_tokens == 0 or transcript.usage().total_tokens:
        return
    turns = transcript.main.turns
    if turns:
        turns[-1].usage = usage
        transcript.notes.append("Token usage is the run's total from its result record.")


def _result(
    transcript: Transcript, builder: ThreadBuilder, record: dict[str, Any], line: int
) -> None:
    cost = record.get("total_cost_usd", record.get("cost_usd"))
    if isinstance(cost, (int, float)):
        transcript.cost_usd = float(cost)
    duration = record.get("duration_ms")
    if isinstance(duration, (int, float)):
        transcript.duration_s = duration / 1000
    subtype = str(record.get("subtype") or "")
    transcript.is_error = bool(record.get("is_error")) or subtype.startswith("error")
    text = record.get("result")
    transcript.final_text = text if isinstance(text, str) else None
    turns = record.get("num_turns")
    summary = f"Run ended: {subtype or 'result'}" + (f", {turns} turns" if turns else "")
    if transcript.is_error:
        errors = record.get("errors")
        detail = text if isinstance(text, str) and text else (str(errors) if errors else "")
        summary += f" (error{': ' + detail if detail else ''})"
    turn = builder.current_turn(None)
    builder.event(turn, EventKind.SYSTEM_NOTICE, line, text=summary, is_error=transcript.is_error)
