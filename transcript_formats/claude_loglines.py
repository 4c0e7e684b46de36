"""A Claude Code session exported as one JSON document `{"loglines": [...]}`: the shape Claude
Code for the web's session export has, and that simonw's claude-code-transcripts reads (it
writes local session files in that shape too).

Each logline is a session-file record: `{type: user | assistant, timestamp, message: {role,
content}}`, with the local file's other fields where the export kept them (uuid, sessionId,
requestId, cwd, version, gitBranch, toolUseResult, isMeta, isCompactSummary, isSidechain).
Content blocks are Anthropic's (text, thinking, tool_use, tool_result, image). Tokens: each
assistant message's `usage`, counted once per model call (message id and request id), as in
the session files; an export without usage has no token counts.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from .anthropic_messages import Shared, ThreadBuilder
from .finish import finish_transcript
from .log_format import LogFormat
from .records import (
    RECORD_ERRORS,
    SourceFile,
    as_dict,
    as_str,
    as_text,
    load_json_document,
    record_not_understood,
    unknown_event,
)
from .schema import EventKind, Thread, Transcript

FORMAT = "claude-code-loglines"

_SILENT = frozenset({"summary", "file-history-snapshot", "queue-operation"})


def is_loglines(document: Any) -> bool:
    lines = as_dict(document).get("loglines")
    # The first records only (islice: a big document's list is read as it is iterated).
    return isinstance(lines, list) and any(
        isinstance(r, dict) and r.get("type") in ("user", "assistant") for r in islice(lines, 50)
    )


def parse(files: list[SourceFile]) -> Transcript:
    source = files[0]
    document = load_json_document(source)
    transcript = Transcript(format=FORMAT)
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    builder = ThreadBuilder(thread, Shared())
    for number, entry in enumerate(as_dict(document).get("loglines") or [], start=1):
        if not isinstance(entry, dict):
            continue
        try:
            _entry(builder, transcript, entry, number)
        except RECORD_ERRORS as exc:
            record_not_understood(transcript.malformed, source.name, number, exc)
    return finish_transcript(transcript)


def _entry(
    builder: ThreadBuilder, transcript: Transcript, entry: dict[str, Any], number: int
) -> None:
    kind = as_str(entry.get("type"))
    stamp = as_str(entry.get("timestamp"))
    _describe(transcript, entry)
    message = as_dict(entry.get("message"))
    if kind == "user" and entry.get("isCompactSummary"):
        turn = builder.new_turn(timestamp=stamp)
        text = as_text(message.get("content"))
        builder.event(turn, EventKind.COMPACTION, number, text=text, timestamp=stamp)
    elif kind == "user":
        builder.add_user(
            message,
            tool_use_result=entry.get("toolUseResult"),
            timestamp=stamp,
            line=number,
            is_meta=bool(entry.get("isMeta")),
        )
    elif kind == "assistant":
        builder.add_assistant(
            message,
            request_id=as_str(entry.get("requestId")),
            timestamp=stamp,
            line=number,
            is_error=bool(entry.get("isApiErrorMessage")),
        )
    elif kind == "system":
        turn = builder.current_turn(stamp)
        text = as_str(entry.get("content")) or as_str(entry.get("subtype")) or "system"
        builder.event(turn, EventKind.SYSTEM_NOTICE, number, text=text, timestamp=stamp)
    elif kind not in _SILENT:
        turn = builder.current_turn(stamp)
        turn.events.append(unknown_event(builder.shared.ids, entry, str(kind or "?"), number))


def _describe(transcript: Transcript, entry: dict[str, Any]) -> None:
    transcript.session_id = transcript.session_id or as_str(entry.get("sessionId"))
    transcript.cwd = transcript.cwd or as_str(entry.get("cwd"))
    transcript.cli_version = transcript.cli_version or as_str(entry.get("version"))
    transcript.git_branch = transcript.git_branch or as_str(entry.get("gitBranch"))


FORMAT_SPEC = LogFormat(
    FORMAT,
    "Claude Code (web export)",
    parse,
    "claude-code",
    document=((15, is_loglines),),
)
