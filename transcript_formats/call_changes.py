"""One meaning of "file change" across readers: every file a file tool wrote or edited is a
file_change event, whether or not its reader placed one.

Readers place file changes from what their log records (Claude Code's structuredPatch, Gemini
CLI's fileDiff, Codex's patch, Kimi CLI's diff display...). A log that records no diff for a
write (Gemini CLI's write_file of a new file, pi's write, Kimi Code's Write) still holds the
call's arguments: a path and the whole text, or a path and old/new strings. After every parse,
such a call that succeeded and has no file change gets one, built from its arguments, placed
right after its result: a whole-file write as a new file's diff, an edit as the diff of the
replaced text. Writes made by shell commands are not file changes (the written-file finder
reads them for the solution).
"""

from __future__ import annotations

from .diffs import new_file_diff, text_diff
from .file_writes import FileOp, ops_of_call
from .schema import Event, EventKind, Transcript, Turn

_TOOL_OPS = frozenset({"write", "append", "edit"})


def place_call_changes(transcript: Transcript) -> int:
    """Add the file changes readers left out; returns how many were added."""
    events = transcript.events()
    placed = {e.call_id for e in events if e.kind == EventKind.FILE_CHANGE and e.call_id}
    results = _results(transcript)
    added = 0
    for event in events:
        if event.kind != EventKind.TOOL_CALL or not event.call_id or event.call_id in placed:
            continue
        found = results.get(event.call_id)
        if found is None or found[1].is_error:
            continue
        turn, result = found
        changes = [_change(event, op, n) for n, op in enumerate(_tool_ops(event, result))]
        at = turn.events.index(result) + 1
        turn.events[at:at] = changes
        added += len(changes)
    return added


def _results(transcript: Transcript) -> dict[str, tuple[Turn, Event]]:
    found: dict[str, tuple[Turn, Event]] = {}
    for thread in transcript.all_threads():
        for turn in thread.turns:
            for event in turn.events:
                if event.kind == EventKind.TOOL_RESULT and event.call_id:
                    found.setdefault(event.call_id, (turn, event))
    return found


def _tool_ops(call: Event, result: Event) -> list[FileOp]:
    # A file tool's ops name the tool; a shell command's name the command.
    ops = ops_of_call(call, result, [])
    return [op for op in ops if op.kind in _TOOL_OPS and op.path and op.how == call.tool_name]


def _change(call: Event, op: FileOp, number: int) -> Event:
    if op.kind == "edit":
        old = "".join(f"{edit.old}\n" for edit in op.edits)
        new = "".join(f"{edit.new}\n" for edit in op.edits)
        diff = text_diff(op.path, old, new)
    else:
        diff = new_file_diff(op.path, op.text or "")
    return Event(
        id=f"{call.id}.w{number}",
        kind=EventKind.FILE_CHANGE,
        tool_name=call.tool_name,
        call_id=call.call_id,
        path=op.path,
        diff=diff,
        timestamp=call.timestamp,
        line=call.line,
    )
