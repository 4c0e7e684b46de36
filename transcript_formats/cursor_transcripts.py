"""Cursor agent transcripts: what Cursor's agent (the editor's and the `cursor-agent` CLI's)
writes under `~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl`, a subagent's in
`<id>/subagents/<agent id>.jsonl`. Not the `--output-format stream-json` stream (cursor.py).

Each line is `{role: user | assistant, message: {content: [blocks]}}` (the message may repeat
the role), and `{type: turn_ended, status, error?}` closes a turn. Blocks: `text`, `tool_use
{name, input}`, and stand-ins for hidden reasoning (`[REDACTED]` text, `{type: redacted}`).
Some versions add `tool_result` and `command_output` blocks; most record no tool output at
all. A prompt is wrapped as `<timestamp>Monday, Jun 1, 2026, 9:14 AM (UTC+2)</timestamp>
<user_query>…</user_query>`, sometimes followed by context Cursor attached.

The transcript holds no model name, no token counts and no time but the prompts' own, so a
Cursor run has no usage, no cost and no duration; each assistant line is taken as one model
call. `Write`, `StrReplace` and `Delete` calls become file changes from their arguments (a
snippet diff for a replacement, as the file's content is unknown).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import PurePosixPath
from typing import Any

from .diffs import deleted_file_diff, new_file_diff, text_diff
from .finish import finish_transcript
from .records import (
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_dict,
    as_text,
    capped_raw,
    images_of,
    iter_jsonl,
    record_not_understood,
)
from .schema import Event, EventKind, Thread, Transcript, Turn
from .spawns import spawn_after

FORMAT = "cursor-agent-transcript"
REDACTED = "[REDACTED]"
_ENDED_WELL = frozenset({"success", "completed"})
_STAMP = re.compile(r"<timestamp>(.*?)</timestamp>", re.S)
_QUERY = re.compile(r"<user_query>(.*?)(?:</user_query>|$)", re.S)
_CURSOR_TIME = re.compile(
    r"^\s*\w+,\s+(\w{3})\w*\.?\s+(\d{1,2}),\s+(\d{4}),\s+(\d{1,2}):(\d{2})\s*([AP]M)"
    r"\s*\(UTC(?:([+-])(\d{1,2})(?::?(\d{2}))?)?\)\s*$",
    re.I,
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SPAWNING_TOOLS = frozenset({"Task", "Agent", "task"})


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    ids = EventIds()
    main_file = _main_file(files)
    transcript.session_id = PurePosixPath(main_file.name).stem
    main = _thread(Thread(id="main", kind="main"), main_file, ids, transcript)
    transcript.threads.append(main)
    _subagents(transcript, main, [f for f in files if f is not main_file], ids)
    finish_transcript(transcript)
    # Only prompts carry a time: the run's end, and so its length, is unknown.
    transcript.ended_at = transcript.duration_s = None
    return transcript


def _is_subagent_file(source: SourceFile) -> bool:
    return "subagents" in PurePosixPath(source.name).parts[:-1]


def _main_file(files: list[SourceFile]) -> SourceFile:
    sessions = [f for f in files if not _is_subagent_file(f)] or files
    for source in sessions:
        path = PurePosixPath(source.name)
        if path.parent.name == path.stem:  # <id>/<id>.jsonl
            return source
    return sessions[0]


# -- one transcript file ---------------------------------------------------------------------


class _Reader:
    def __init__(self, thread: Thread, ids: EventIds) -> None:
        self.thread, self.ids = thread, ids
        self.turn: Turn | None = None

    def new_turn(self, stamp: str | None = None) -> Turn:
        self.turn = Turn(index=len(self.thread.turns), timestamp=stamp)
        self.thread.turns.append(self.turn)
        return self.turn

    def event(self, turn: Turn, kind: EventKind, line: int, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, **fields)
        turn.events.append(event)
        return event


def _thread(thread: Thread, source: SourceFile, ids: EventIds, transcript: Transcript) -> Thread:
    reader = _Reader(thread, ids)
    for line, record in iter_jsonl(source, transcript.malformed):
        try:
            _record(reader, record, line)
        except RECORD_ERRORS as exc:
            record_not_understood(transcript.malformed, source.name, line, exc)
    return thread


def _record(reader: _Reader, record: dict[str, Any], line: int) -> None:
    role = record.get("role")
    message = as_dict(record.get("message"))
    content = message.get("content", record.get("content"))
    if record.get("type") == "turn_ended":
        _turn_ended(reader, record, line)
    elif role == "user":
        _user(reader, content, line)
    elif role == "assistant":
        turn = reader.new_turn()
        for block in content if isinstance(content, list) else [content]:
            _assistant_block(reader, turn, block, line)
        if not turn.events:
            reader.event(turn, EventKind.SYSTEM_NOTICE, line, text="An empty assistant message.")
    else:
        turn = reader.turn or reader.new_turn()
        raw_type = str(record.get("type") or role or "record")
        reader.event(turn, EventKind.UNKNOWN, line, raw_type=raw_type, raw=capped_raw(record))


def _turn_ended(reader: _Reader, record: dict[str, Any], line: int) -> None:
    status = str(record.get("status") or "")
    if status in _ENDED_WELL:
        return
    error = record.get("error")
    text = f"Turn ended: {status or 'unknown status'}" + (f": {error}" if error else "")
    turn = reader.turn or reader.new_turn()
    reader.event(turn, EventKind.SYSTEM_NOTICE, line, text=text, is_error=status == "error")


def _user(reader: _Reader, content: Any, line: int) -> None:
    blocks = content if isinstance(content, list) else [content]
    texts = [b if isinstance(b, str) else str(b.get("text") or "") for b in blocks if _is_text(b)]
    query, context, stamp = split_prompt("\n".join(texts))
    turn = reader.new_turn(stamp)
    images = images_of(blocks)
    others = [
        b for b in blocks if isinstance(b, dict) and not _is_text(b) and b.get("type") != "image"
    ]
    if query or images or not others:
        reader.event(turn, EventKind.USER_TEXT, line, text=query, images=images, timestamp=stamp)
    if context:
        reader.event(turn, EventKind.SYSTEM_NOTICE, line, text=context, timestamp=stamp)
    for block in others:
        _assistant_block(reader, turn, block, line)


def _is_text(block: Any) -> bool:
    return isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")


def _assistant_block(reader: _Reader, turn: Turn, block: Any, line: int) -> None:
    kind = block.get("type") if isinstance(block, dict) else "text"
    text = block if isinstance(block, str) else str(as_dict(block).get("text") or "")
    if (kind == "text" and text.strip() == REDACTED) or kind == "redacted":
        reader.event(turn, EventKind.REASONING, line, text=REDACTED)
    elif kind == "thinking":
        reader.event(turn, EventKind.REASONING, line, text=str(block.get("thinking") or text))
    elif kind == "text":
        if text.strip():
            reader.event(turn, EventKind.ASSISTANT_TEXT, line, text=text)
    elif kind == "tool_use":
        _tool_use(reader, turn, block, line)
    elif kind in ("tool_result", "command_output"):
        body = block.get("output") if kind == "command_output" else block.get("content")
        reader.event(
            turn,
            EventKind.TOOL_RESULT,
            line,
            text=as_text(body if body is not None else block.get("output")),
            tool_name="Shell" if kind == "command_output" else None,
            call_id=_str(block.get("tool_use_id")),
            is_error=block.get("is_error") is True,
        )
    else:
        reader.event(turn, EventKind.UNKNOWN, line, raw_type=str(kind), raw=capped_raw(block))


def _tool_use(reader: _Reader, turn: Turn, block: dict[str, Any], line: int) -> None:
    name = _str(block.get("name")) or "?"
    args = block.get("input")
    call_id = _str(block.get("id"))
    reader.event(turn, EventKind.TOOL_CALL, line, tool_name=name, call_id=call_id, arguments=args)
    diff = _file_diff(name, as_dict(args))
    if diff is not None:
        path, text = diff
        reader.event(
            turn, EventKind.FILE_CHANGE, line, tool_name=name, call_id=call_id, path=path, diff=text
        )


def _file_diff(name: str, args: dict[str, Any]) -> tuple[str, str] | None:
    path = args.get("path") or args.get("file_path") or args.get("target_file")
    if not isinstance(path, str) or not path:
        return None
    if name == "Write" and isinstance(args.get("contents"), str):
        return path, new_file_diff(path, args["contents"])
    old, new = args.get("old_string"), args.get("new_string")
    if name == "StrReplace" and isinstance(old, str) and isinstance(new, str):
        return path, text_diff(path, old, new)
    if name == "Delete":
        return path, deleted_file_diff(path, None)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# -- prompts ---------------------------------------------------------------------------------


def split_prompt(text: str) -> tuple[str, str, str | None]:
    """A user message as (what the user asked, what Cursor attached around it, ISO time)."""
    found = _STAMP.search(text)
    stamp = cursor_time(found.group(1)) if found else None
    rest = _STAMP.sub("", text)
    query = _QUERY.search(rest)
    if query is None:
        return rest.strip(), "", stamp
    context = (rest[: query.start()] + rest[query.end() :]).strip()
    return query.group(1).strip(), context, stamp


def cursor_time(text: str) -> str | None:
    """ "Monday, Jun 1, 2026, 9:14 AM (UTC+2)" as UTC ISO 8601, else None."""
    found = _CURSOR_TIME.match(text)
    if found is None:
        return None
    month, day, year, hour, minute, half, sign, off_h, off_m = found.groups()
    if month.lower() not in _MONTHS:
        return None
    month_number = _MONTHS.index(month.lower()) + 1
    hour24 = int(hour) % 12 + (12 if half.upper() == "PM" else 0)
    offset = timedelta(hours=int(off_h or 0), minutes=int(off_m or 0))
    zone = timezone(-offset if sign == "-" else offset)
    try:
        local = datetime(int(year), month_number, int(day), hour24, int(minute), tzinfo=zone)
    except ValueError:
        return None
    return local.astimezone(UTC).isoformat().replace("+00:00", "Z")


# -- subagents -------------------------------------------------------------------------------


def _subagents(
    transcript: Transcript, main: Thread, others: list[SourceFile], ids: EventIds
) -> None:
    """A subagent's first prompt is the `prompt` of the Task call that started it."""
    calls = [
        (turn, event)
        for turn in main.turns
        for event in turn.events
        if event.kind == EventKind.TOOL_CALL and event.tool_name in _SPAWNING_TOOLS
    ]
    for source in others:
        stem = PurePosixPath(source.name).stem
        thread = _thread(Thread(id=f"agent-{stem}", kind="subagent"), source, ids, transcript)
        site = _call_with_prompt(calls, _first_prompt(thread))
        if site is None and not _is_subagent_file(source):
            transcript.notes.append(f"{source.name} is another session, not shown here.")
            continue
        if site is not None:
            calls.remove(site)
            args = as_dict(site[1].arguments)
            thread.title = str(args.get("description") or args.get("subagent_type") or "")
        else:
            transcript.notes.append(
                f"Subagent {stem} matches no Task call; it is shown at the end."
            )
        transcript.threads.append(thread)
        if site is None and not main.turns:
            main.turns.append(Turn(index=0))
        turn, after = site if site is not None else (main.turns[-1], None)
        spawn_after(thread, main, turn, after, ids)


def _first_prompt(thread: Thread) -> str:
    for turn in thread.turns:
        for event in turn.events:
            if event.kind == EventKind.USER_TEXT:
                return event.text.strip()
    return ""


def _call_with_prompt(calls: list[tuple[Turn, Event]], prompt: str) -> tuple[Turn, Event] | None:
    for site in calls:
        if prompt and str(as_dict(site[1].arguments).get("prompt") or "").strip() == prompt:
            return site
    return None
