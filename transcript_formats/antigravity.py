"""Antigravity CLI (Google's `agy`) conversations: the step log it writes beside each
conversation, `~/.gemini/antigravity-cli/brain/<conversation id>/.system_generated/logs/`
`transcript.jsonl` (every build; tool arguments JSON-encoded a second time, each value a JSON
string) or `transcript_full.jsonl` (1.1.24 and later; the values as they are). The desktop
Antigravity writes the same lines under `~/.gemini/antigravity-ide/brain/`. The conversation
store itself (`conversations/<id>.pb`) is encrypted and not read.

Each line is one trajectory step `{step_index, source, type, status, created_at, content,
thinking, tool_calls: [{name, args}]}`:

- USER_EXPLICIT / USER_INPUT: the prompt, wrapped in `<USER_REQUEST>` with harness metadata;
- MODEL / PLANNER_RESPONSE: one model call, any of its thinking, text and tool calls;
- MODEL / a tool's step (RUN_COMMAND, VIEW_FILE, CODE_ACTION, ..., GENERIC since 1.1.24): a
  tool's result text after `Created At:` / `Completed At:` lines. Calls carry no ids: the results
  answer the calls of the model call before them, in order;
- SYSTEM / CHECKPOINT: the summary a compacted conversation resumes from (a compaction);
  SYSTEM_MESSAGE: a notice; CONVERSATION_HISTORY, EPHEMERAL_MESSAGE: bookkeeping, not shown.
- The prompt's `<USER_SETTINGS_CHANGE>` block names the model the user picked.

write_to_file `{TargetFile, CodeContent}` and replace_file_content /
multi_replace_file_content `{TargetFile, TargetContent, ReplacementContent}` (or a list of
`ReplacementChunks`) are file changes. Tokens: the step log records none in the builds known to
us; a planner step's `input_tokens`, `cache_read_tokens` and `output_tokens`, where present,
are counted as one model call (`input_tokens` taken as the uncached part).
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

from .diffs import new_file_diff, text_diff
from .finish import finish_transcript
from .log_format import LogFormat
from .records import (
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_dict,
    as_str,
    iter_jsonl,
    record_not_understood,
    unknown_event,
)
from .schema import Event, EventKind, Thread, Transcript, Turn, Usage

FORMAT = "antigravity-cli"

_SOURCES = frozenset({"USER_EXPLICIT", "MODEL", "SYSTEM", "USER_IMPLICIT"})
_BOOKKEEPING = frozenset({"CONVERSATION_HISTORY", "EPHEMERAL_MESSAGE"})
# The model the user picked, as the prompt's settings block says it.
_MODEL_CHANGE = re.compile(
    r"`Model Selection` from .*? to (.+?)\.?\s*(?:\n|</USER_SETTINGS_CHANGE>)"
)
_REQUEST = re.compile(r"<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.DOTALL)
_RESULT_HEAD = re.compile(r"\A(?:(?:Created|Completed) At:[^\n]*\n)+\n?")
_FAILED = frozenset({"ERROR", "FAILED", "CANCELED", "CANCELLED"})


def is_antigravity(records: list[dict[str, Any]]) -> bool:
    return any(
        as_str(r.get("source")) in _SOURCES
        and as_str(r.get("type")) in ("USER_INPUT", "PLANNER_RESPONSE", "CONVERSATION_HISTORY")
        for r in records
    )


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    # transcript_full.jsonl holds the same steps with their arguments as they are.
    chosen = sorted(files, key=lambda f: ("transcript_full" not in f.name, f.name))
    source = chosen[0]
    for other in chosen[1:]:
        transcript.notes.append(f"{other.name}: the same conversation's steps, not shown twice.")
    reader = _Reader(thread, EventIds())
    for line, step in iter_jsonl(source, transcript.malformed):
        try:
            reader.step(step, line)
        except RECORD_ERRORS as exc:
            record_not_understood(transcript.malformed, source.name, line, exc)
    parts = source.name.split("/")
    if "brain" in parts[:-1]:
        transcript.session_id = parts[parts.index("brain") + 1]
    return finish_transcript(transcript)


class _Reader:
    def __init__(self, thread: Thread, ids: EventIds) -> None:
        self.thread, self.ids = thread, ids
        self.turn: Turn | None = None
        self.waiting: deque[Event] = deque()  # calls of the last model call with no result yet
        self.model: str | None = None

    def new_turn(self, stamp: str | None) -> Turn:
        self.turn = Turn(index=len(self.thread.turns), timestamp=stamp)
        self.thread.turns.append(self.turn)
        return self.turn

    def event(self, kind: EventKind, line: int, stamp: str | None, **fields: Any) -> Event:
        turn = self.turn or self.new_turn(stamp)
        event = Event(id=self.ids.next(), kind=kind, line=line, timestamp=stamp, **fields)
        turn.events.append(event)
        return event

    def step(self, step: dict[str, Any], line: int) -> None:
        source, kind = step.get("source"), as_str(step.get("type")) or "?"
        stamp = as_str(step.get("created_at"))
        content = as_str(step.get("content")) or ""
        if kind in _BOOKKEEPING or (kind == "CHECKPOINT" and not content):
            return
        if kind == "USER_INPUT":
            self.waiting.clear()
            self.new_turn(stamp)
            match = _REQUEST.search(content)
            self.event(EventKind.USER_TEXT, line, stamp, text=match.group(1) if match else content)
            model = _MODEL_CHANGE.search(content)
            self.model = model.group(1).strip() if model else self.model
        elif kind == "CHECKPOINT" and content:
            # The summary the conversation resumes from after a compaction.
            self.new_turn(stamp)
            self.event(EventKind.COMPACTION, line, stamp, text=content)
        elif source == "SYSTEM" and content:
            self.event(EventKind.SYSTEM_NOTICE, line, stamp, text=content)
        elif kind == "PLANNER_RESPONSE":
            self.planner(step, content, line, stamp)
        elif source == "MODEL":
            self.result(step, kind, content, line, stamp)
        else:
            raw = unknown_event(self.ids, step, kind, line)
            (self.turn or self.new_turn(stamp)).events.append(raw)

    def planner(self, step: dict[str, Any], content: str, line: int, stamp: str | None) -> None:
        turn = self.new_turn(stamp)
        turn.usage, turn.model = _usage(step), self.model
        self.waiting.clear()
        thinking = as_str(step.get("thinking"))
        if thinking:
            self.event(EventKind.REASONING, line, stamp, text=thinking)
        if content:
            self.event(EventKind.ASSISTANT_TEXT, line, stamp, text=content)
        for number, call in enumerate(step.get("tool_calls") or []):
            call = as_dict(call)
            name = as_str(call.get("name")) or "?"
            event = self.event(
                EventKind.TOOL_CALL,
                line,
                stamp,
                tool_name=name,
                call_id=f"step-{step.get('step_index', line)}-{number}",
                arguments=_arguments(call.get("args", call.get("arguments"))),
            )
            self.waiting.append(event)

    def result(
        self, step: dict[str, Any], kind: str, content: str, line: int, stamp: str | None
    ) -> None:
        call = self.waiting.popleft() if self.waiting else None
        failed = str(step.get("status") or "").upper() in _FAILED
        self.event(
            EventKind.TOOL_RESULT,
            line,
            stamp,
            text=_RESULT_HEAD.sub("", content),
            tool_name=call.tool_name if call else kind.lower(),
            call_id=call.call_id if call else None,
            is_error=failed,
        )
        if call is not None and not failed:
            self.file_change(call, line, stamp)

    def file_change(self, call: Event, line: int, stamp: str | None) -> None:
        args = as_dict(call.arguments)
        path = as_str(args.get("TargetFile"))
        if not path:
            return
        code = as_str(args.get("CodeContent"))
        chunks = args.get("ReplacementChunks")
        pairs = [as_dict(c) for c in chunks] if isinstance(chunks, list) else [args]
        edits = [
            (as_str(c.get("TargetContent")), as_str(c.get("ReplacementContent"))) for c in pairs
        ]
        if code is not None:
            diff = new_file_diff(path, code)
        elif edits and all(old is not None and new is not None for old, new in edits):
            old_text = "\n".join(str(old) for old, _ in edits) + "\n"
            new_text = "\n".join(str(new) for _, new in edits) + "\n"
            diff = text_diff(path, old_text, new_text)
        else:
            return
        self.event(
            EventKind.FILE_CHANGE,
            line,
            stamp,
            tool_name=call.tool_name,
            call_id=call.call_id,
            path=path,
            diff=diff,
        )


def _arguments(raw: Any) -> Any:
    """Arguments with each value decoded once more where the log JSON-encoded it."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw
    if not isinstance(raw, dict):
        return raw
    return {key: _decoded(value) for key, value in raw.items()}


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ('"', "[", "{") and len(value) >= 2:
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _usage(step: dict[str, Any]) -> Usage | None:
    counts = [step.get(k) for k in ("input_tokens", "output_tokens", "cache_read_tokens")]
    if not any(isinstance(c, int) and not isinstance(c, bool) for c in counts):
        return None
    return Usage(*(c if isinstance(c, int) and c > 0 else 0 for c in counts))


FORMAT_SPEC = LogFormat(
    FORMAT,
    "Antigravity CLI",
    parse,
    "antigravity-cli",
    records=((75, is_antigravity),),
)
