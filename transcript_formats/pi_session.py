"""pi coding agent sessions (`~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`, session
versions 1 to 3) and OpenClaw's, which are the same file written by OpenClaw's embedded pi
(`~/.openclaw/agents/<agent>/sessions/<session id>.jsonl`).

The first line is the header `{"type": "session", "version", "id", "timestamp", "cwd"}`; every
later entry has `{type, id, parentId, timestamp}` (version 1 has no ids: the entries are one
line of conversation). Entries form a tree: a branch made with /tree leaves its old entries in
the file, and the conversation is the path from the last entry back to the first. Entry types:
`message` (an AgentMessage: `user`, `assistant` with text / thinking / toolCall parts and its
`usage`, `toolResult`, `bashExecution` (a command the user ran), `custom`, `branchSummary`,
`compactionSummary`), `compaction`, `branch_summary`, `model_change`,
`thinking_level_change`, `custom` (an extension's state, never shown), `custom_message`,
`label`, `session_info`.

Tokens: each assistant message's `usage {input, output, cacheRead, cacheWrite}`, `input`
without the cached part, one model call each; its `cost.total` (OpenClaw: `costUSD`) is the
session's cost where every call has one.
"""

from __future__ import annotations

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
    iter_jsonl,
    record_not_understood,
    unknown_event,
)
from .schema import Event, EventKind, Thread, Transcript, Turn

PI_FORMAT_ID = "pi-session"
OPENCLAW_FORMAT_ID = "openclaw-session"

_ROLES = frozenset(
    {"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary"}
    | {"compactionSummary"}
)
# Entries that hold settings or an extension's state: read, never shown.
_SILENT = frozenset({"session", "thinking_level_change", "custom", "label", "session_info"})


def is_pi(records: list[dict[str, Any]]) -> bool:
    return any(_is_pi_entry(r) for r in records)


def is_openclaw(records: list[dict[str, Any]]) -> bool:
    """A pi session that OpenClaw wrote: its model-snapshot or openclaw.* custom entries, or
    its workspace."""
    return is_pi(records) and any(
        (
            r.get("type") in ("custom", "custom_message")
            and (
                r.get("customType") == "model-snapshot"
                or str(r.get("customType")).startswith("openclaw")
            )
        )
        or (r.get("type") == "session" and "/.openclaw/" in str(r.get("cwd")))
        for r in records
    )


def _is_pi_entry(record: dict[str, Any]) -> bool:
    kind = as_str(record.get("type"))
    if kind == "session":
        return "id" in record and ("cwd" in record or "version" in record)
    if kind in ("model_change", "thinking_level_change", "compaction", "branch_summary"):
        return "id" in record and "parentId" in record
    message = record.get("message")
    return (
        kind == "message"
        and isinstance(message, dict)
        and as_str(message.get("role")) in _ROLES
        and ("parentId" in record or "timestamp" in message)
    )


Entry = tuple[int, dict[str, Any]]  # (line, entry)


def parse(files: list[SourceFile]) -> Transcript:
    source = files[0]
    transcript = Transcript(format=PI_FORMAT_ID)
    entries = [(line, r) for line, r in iter_jsonl(source, transcript.malformed)]
    path, branches = _conversation(entries)
    main = Thread(id="main", kind="main")
    transcript.threads.append(main)
    shared, costs = Shared(), _Costs()
    reader = _read(transcript, main, shared, costs, path, source.name)
    for number, (parent, left) in enumerate(branches, start=1):
        branch = Thread(id=f"branch-{number}", kind="branch", title=_entries(len(left)))
        _read(transcript, branch, shared, costs, left, source.name)
        _branch_off(main, branch, reader.turn_at.get(parent), shared)
    if branches:
        transcript.notes.append(
            f"{len(branches)} branch(es) the session left with /tree are shown apart; their "
            "calls are in the tokens."
        )
    transcript.cost_usd = costs.total()
    for other in files[1:]:
        transcript.notes.append(f"{other.name}: another session, not shown.")
    return finish_transcript(transcript)


def parse_openclaw(files: list[SourceFile]) -> Transcript:
    transcript = parse(files)
    transcript.format = OPENCLAW_FORMAT_ID
    return transcript


def _read(
    transcript: Transcript,
    thread: Thread,
    shared: Shared,
    costs: _Costs,
    entries: list[Entry],
    name: str,
) -> _Reader:
    reader = _Reader(transcript, ThreadBuilder(thread, shared), costs)
    for line, entry in entries:
        try:
            reader.entry(entry, line)
        except RECORD_ERRORS as exc:
            record_not_understood(transcript.malformed, name, line, exc)
        if "id" in entry and thread.turns:
            reader.turn_at[str(entry["id"])] = thread.turns[-1]
    return reader


def _branch_off(main: Thread, branch: Thread, turn: Turn | None, shared: Shared) -> None:
    """A notice where the branch left the main path, naming the branch."""
    if turn is None:
        turn = main.turns[0] if main.turns else Turn(index=0)
        if not main.turns:
            main.turns.append(turn)
    notice = Event(
        id=shared.ids.next(),
        kind=EventKind.SYSTEM_NOTICE,
        text=f"A branch left here with /tree ({branch.title}), shown apart.",
        child_thread=branch.id,
    )
    turn.events.append(notice)
    branch.parent_thread, branch.parent_event = main.id, notice.id
    main.branches.append(branch)


def _conversation(entries: list[Entry]) -> tuple[list[Entry], list[tuple[str, list[Entry]]]]:
    """The entries on the path from the last one back to the first, in order (the header and
    entries without ids, version 1, always); and the branches the session left, each as the id
    of the path entry it left from and its entries."""
    by_id = {str(r["id"]): (line, r) for line, r in entries if "parentId" in r and "id" in r}
    if not by_id:
        return entries, []
    leaf = next(str(r["id"]) for _, r in reversed(entries) if "parentId" in r and "id" in r)
    on_path: set[str] = set()
    node: str | None = leaf
    while node is not None and node in by_id and node not in on_path:
        on_path.add(node)
        parent = by_id[node][1].get("parentId")
        node = str(parent) if parent is not None else None
    if node is not None:
        # A parent that is no entry (a call's id, the header's): the tree cannot be followed,
        # and the file is read as one line of conversation.
        return entries, []
    path = [
        (line, r)
        for line, r in entries
        if "id" not in r or str(r["id"]) in on_path or "parentId" not in r
    ]
    return path, _branches(by_id, on_path)


def _branches(by_id: dict[str, Entry], on_path: set[str]) -> list[tuple[str, list[Entry]]]:
    """Entries off the path, grouped under the path entry their branch left from."""
    groups: dict[str, list[Entry]] = {}
    for entry_id, (line, entry) in sorted(by_id.items(), key=lambda item: item[1][0]):
        if entry_id in on_path:
            continue
        root, seen = entry_id, set()
        while root not in seen:
            seen.add(root)
            parent = by_id[root][1].get("parentId")
            if parent is None or str(parent) in on_path or str(parent) not in by_id:
                break
            root = str(parent)
        parent = by_id[root][1].get("parentId")
        groups.setdefault(str(parent), []).append((line, entry))
    return list(groups.items())


def _entries(count: int) -> str:
    return f"{count} entry" if count == 1 else f"{count} entries"


class _Costs:
    """Each model call's cost as the log states it; the session's is their sum only where
    every call states one."""

    def __init__(self) -> None:
        self.each: list[float | None] = []

    def add(self, cost: Any) -> None:
        number = isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0
        self.each.append(float(cost) if number else None)

    def total(self) -> float | None:
        if not self.each or any(cost is None for cost in self.each):
            return None
        return round(sum(cost for cost in self.each if cost is not None), 6)


class _Reader:
    def __init__(self, transcript: Transcript, builder: ThreadBuilder, costs: _Costs) -> None:
        self.transcript, self.builder, self.costs = transcript, builder, costs
        self.model: str | None = None
        self.turn_at: dict[str, Turn] = {}  # entry id -> the turn it was read into

    def entry(self, entry: dict[str, Any], line: int) -> None:
        kind = as_str(entry.get("type")) or ""
        stamp = as_str(entry.get("timestamp"))
        if kind == "session":
            self.transcript.session_id = as_str(entry.get("id"))
            self.transcript.cwd = as_str(entry.get("cwd"))
            self.transcript.started_at = stamp
        elif kind == "message":
            self.message(as_dict(entry.get("message")), line, stamp)
        elif kind == "model_change":
            self.model = as_str(entry.get("modelId")) or self.model
        elif kind in ("compaction", "branch_summary"):
            turn = self.builder.new_turn(timestamp=stamp)
            event_kind = EventKind.COMPACTION if kind == "compaction" else EventKind.SYSTEM_NOTICE
            text = as_str(entry.get("summary")) or kind
            self.builder.event(turn, event_kind, line, text=text, timestamp=stamp)
        elif kind == "custom_message":
            self.notice(as_text(entry.get("content")), line, stamp)
        elif kind not in _SILENT:
            turn = self.builder.current_turn(stamp)
            turn.events.append(unknown_event(self.builder.shared.ids, entry, kind or "?", line))

    def notice(self, text: str, line: int, stamp: str | None) -> None:
        turn = self.builder.current_turn(stamp)
        self.builder.event(turn, EventKind.SYSTEM_NOTICE, line, text=text, timestamp=stamp)

    def message(self, message: dict[str, Any], line: int, stamp: str | None) -> None:
        role = message.get("role")
        if role == "user":
            self.builder.add_user(
                {"content": _blocks(message.get("content"))},
                tool_use_result=None,
                timestamp=stamp,
                line=line,
            )
        elif role == "assistant":
            self.assistant(message, line, stamp)
        elif role == "toolResult":
            block = {
                "tool_use_id": message.get("toolCallId"),
                "content": _blocks(message.get("content")),
                "is_error": bool(message.get("isError")),
            }
            self.builder.add_tool_result(block, None, stamp, line)
        elif role == "bashExecution":
            text = f"$ {message.get('command')}\n{as_text(message.get('output'))}".rstrip()
            self.notice(text, line, stamp)
        elif role in ("custom", "branchSummary", "compactionSummary"):
            text = as_str(message.get("summary")) or as_text(message.get("content"))
            self.notice(text, line, stamp)
        else:
            turn = self.builder.current_turn(stamp)
            raw = {**message, "type": f"role:{role}"}
            turn.events.append(unknown_event(self.builder.shared.ids, raw, f"role:{role}", line))

    def assistant(self, message: dict[str, Any], line: int, stamp: str | None) -> None:
        usage = as_dict(message.get("usage"))
        self.builder.add_assistant(
            {
                "id": f"entry-{line}",
                "model": as_str(message.get("model")) or self.model,
                "content": _blocks(message.get("content")),
                "usage": {
                    "input_tokens": usage.get("input"),
                    "output_tokens": usage.get("output"),
                    "cache_read_input_tokens": usage.get("cacheRead"),
                    "cache_creation_input_tokens": usage.get("cacheWrite"),
                }
                if usage
                else None,
            },
            request_id=None,
            timestamp=stamp,
            line=line,
            is_error=message.get("stopReason") == "error",
        )
        error = as_str(message.get("errorMessage"))
        if error:
            turn = self.builder.current_turn(stamp)
            self.builder.event(
                turn, EventKind.SYSTEM_NOTICE, line, text=error, timestamp=stamp, is_error=True
            )
        self.costs.add(as_dict(usage.get("cost")).get("total", usage.get("costUSD")))


def _blocks(content: Any) -> list[dict[str, Any]]:
    """pi content parts as Anthropic blocks."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        part = as_dict(part)
        kind = part.get("type")
        if kind == "toolCall":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": part.get("id"),
                    "name": part.get("name"),
                    "input": part.get("arguments"),
                }
            )
        elif kind == "image":
            blocks.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": part.get("mimeType"),
                        "data": part.get("data"),
                    },
                }
            )
        elif part:
            blocks.append(part)
    return blocks


PI_FORMAT = LogFormat(
    PI_FORMAT_ID,
    "pi",
    parse,
    "pi",
    records=((46, is_pi),),
)
OPENCLAW_FORMAT = LogFormat(
    OPENCLAW_FORMAT_ID,
    "OpenClaw",
    parse_openclaw,
    "openclaw",
    records=((45, is_openclaw),),
)
