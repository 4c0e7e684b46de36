"""Threads from Anthropic-style messages, shared by Claude Code's session files and stream-json.

Claude Code writes one line per content block of a model response, each line repeating the
response's usage. A model call is identified by (message.id, requestId); its lines join one
Turn and its usage is taken from the line with the most output tokens (the last, when equal),
never summed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .diffs import (
    TrackedFiles,
    apply_unified_diff,
    new_file_diff,
    structured_patch_diff,
    text_diff,
)
from .records import EventIds, as_text, capped_raw, images_of
from .schema import Event, EventKind, Image, Thread, Turn, Usage

SPAWN_TOOLS = frozenset({"Task", "Agent"})
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_AGENT_ID_IN_TEXT = re.compile(r"agentId:\s*([A-Za-z0-9_-]+)")


@dataclass
class CallSite:
    """Where a tool call sits, so that its result, diff and subagent can be placed beside it."""

    thread: Thread
    turn: Turn
    event: Event


@dataclass
class Shared:
    """State shared by all threads of one transcript."""

    ids: EventIds = field(default_factory=EventIds)
    files: TrackedFiles = field(default_factory=TrackedFiles)
    calls: dict[str, CallSite] = field(default_factory=dict)
    # (call id of the spawning Task/Agent call, agent id) found in tool results
    spawn_links: list[tuple[str, str]] = field(default_factory=list)
    # Early Claude Code wrote each model call's cost on its lines (costUSD): (message, request)
    call_costs_usd: dict[tuple[str, str], float] = field(default_factory=dict)


def usage_from(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=_int(raw.get("input_tokens")),
        output_tokens=_int(raw.get("output_tokens")),
        cache_read_tokens=_int(raw.get("cache_read_input_tokens")),
        cache_write_tokens=_int(raw.get("cache_creation_input_tokens")),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


class ThreadBuilder:
    """Appends messages to one Thread, turn by turn."""

    def __init__(self, thread: Thread, shared: Shared) -> None:
        self.thread = thread
        self.shared = shared
        self._calls_by_key: dict[tuple[str, str], Turn] = {}
        self._current: Turn | None = None

    # -- turns ---------------------------------------------------------------------------

    def new_turn(self, *, timestamp: str | None = None, model: str | None = None) -> Turn:
        turn = Turn(index=len(self.thread.turns), timestamp=timestamp, model=model)
        self.thread.turns.append(turn)
        self._current = turn
        return turn

    def current_turn(self, timestamp: str | None = None) -> Turn:
        return self._current if self._current is not None else self.new_turn(timestamp=timestamp)

    def event(self, turn: Turn, kind: EventKind, line: int | None, **fields: Any) -> Event:
        event = Event(id=self.shared.ids.next(), kind=kind, line=line, **fields)
        turn.events.append(event)
        return event

    # -- assistant -----------------------------------------------------------------------

    def add_assistant(
        self,
        message: dict[str, Any],
        *,
        request_id: str | None,
        timestamp: str | None,
        line: int | None,
        is_error: bool = False,
    ) -> None:
        turn = self._model_call_turn(message, request_id, timestamp)
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict):
                self._assistant_block(turn, block, timestamp, line, is_error)

    def _model_call_turn(
        self, message: dict[str, Any], request_id: str | None, timestamp: str | None
    ) -> Turn:
        model = message.get("model") if isinstance(message.get("model"), str) else None
        if model == "<synthetic>":
            model = None
        message_id = message.get("id")
        key = (str(message_id), str(request_id)) if message_id else None
        turn = self._calls_by_key.get(key) if key else None
        if turn is None:
            turn = self.new_turn(timestamp=timestamp, model=model)
            if key:
                self._calls_by_key[key] = turn
        self._current = turn
        usage = usage_from(message.get("usage"))
        # Every content-block line repeats the call's usage: keep the largest (latest) one.
        if usage is not None and (
            turn.usage is None or usage.output_tokens >= turn.usage.output_tokens
        ):
            turn.usage = usage
        return turn

    def _assistant_block(
        self,
        turn: Turn,
        block: dict[str, Any],
        timestamp: str | None,
        line: int | None,
        is_error: bool,
    ) -> None:
        kind = block.get("type")
        if kind == "text":
            self.event(
                turn,
                EventKind.ASSISTANT_TEXT,
                line,
                text=str(block.get("text") or ""),
                timestamp=timestamp,
                is_error=is_error,
            )
        elif kind == "thinking":
            self.event(
                turn,
                EventKind.REASONING,
                line,
                text=str(block.get("thinking") or ""),
                timestamp=timestamp,
            )
        elif kind == "redacted_thinking":
            self.event(
                turn, EventKind.REASONING, line, text="[redacted thinking]", timestamp=timestamp
            )
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            call_id = str(block.get("id") or "")
            event = self.event(
                turn,
                EventKind.TOOL_CALL,
                line,
                tool_name=str(block.get("name") or "?"),
                call_id=call_id or None,
                arguments=block.get("input"),
                timestamp=timestamp,
            )
            if call_id:
                self.shared.calls[call_id] = CallSite(self.thread, turn, event)
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            self.event(
                turn,
                EventKind.TOOL_RESULT,
                line,
                call_id=block.get("tool_use_id"),
                text=as_text(block.get("content")),
                timestamp=timestamp,
            )
        else:
            self.event(
                turn,
                EventKind.UNKNOWN,
                line,
                raw_type=f"content:{kind}",
                raw=capped_raw(block),
                timestamp=timestamp,
            )

    # -- user ----------------------------------------------------------------------------

    def add_user(
        self,
        message: dict[str, Any],
        *,
        tool_use_result: Any,
        timestamp: str | None,
        line: int | None,
        is_meta: bool = False,
    ) -> None:
        content = message.get("content")
        if isinstance(content, str):
            self._user_text(content, timestamp, line, is_meta)
            return
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        texts = [b for b in blocks if b.get("type") != "tool_result"]
        if texts:
            self._user_text(as_text(texts), timestamp, line, is_meta, images=images_of(texts))
        for block in results:
            extra = tool_use_result if len(results) == 1 else None
            self.add_tool_result(block, extra, timestamp, line)

    def _user_text(
        self,
        text: str,
        timestamp: str | None,
        line: int | None,
        is_meta: bool,
        *,
        images: tuple[Image, ...] = (),
    ) -> None:
        turn = self.new_turn(timestamp=timestamp)
        kind = EventKind.SYSTEM_NOTICE if is_meta else EventKind.USER_TEXT
        self.event(turn, kind, line, text=text, timestamp=timestamp, images=images)

    def add_tool_result(
        self, block: dict[str, Any], extra: Any, timestamp: str | None, line: int | None
    ) -> None:
        call_id = str(block.get("tool_use_id") or "")
        site = self.shared.calls.get(call_id)
        turn = site.turn if site is not None else self.current_turn(timestamp)
        tool_name = site.event.tool_name if site is not None else None
        text = as_text(block.get("content"))
        is_error = bool(block.get("is_error"))
        self.event(
            turn,
            EventKind.TOOL_RESULT,
            line,
            text=text,
            call_id=call_id or None,
            tool_name=tool_name,
            is_error=is_error,
            timestamp=timestamp,
            images=images_of(block.get("content")),
        )
        if site is None or is_error:
            return
        if tool_name in EDIT_TOOLS:
            self._file_change(site, extra, timestamp, line)
        elif tool_name in SPAWN_TOOLS:
            agent_id = extra.get("agentId") if isinstance(extra, dict) else None
            match = _AGENT_ID_IN_TEXT.search(text) if not agent_id else None
            agent_id = agent_id or (match.group(1) if match else None)
            if agent_id:
                self.shared.spawn_links.append((call_id, str(agent_id)))
        elif tool_name == "Read" and isinstance(extra, dict):
            self._track_read(extra)

    # -- file changes --------------------------------------------------------------------

    def _file_change(
        self, site: CallSite, extra: Any, timestamp: str | None, line: int | None
    ) -> None:
        args = site.event.arguments if isinstance(site.event.arguments, dict) else {}
        result = extra if isinstance(extra, dict) else {}
        path = str(
            result.get("filePath") or args.get("file_path") or args.get("notebook_path") or ""
        )
        if not path:
            return
        diff = self._diff_for(site.event.tool_name or "", path, args, result)
        if diff is None:
            return
        self.event(
            site.turn,
            EventKind.FILE_CHANGE,
            line,
            tool_name=site.event.tool_name,
            call_id=site.event.call_id,
            path=path,
            diff=diff,
            timestamp=timestamp,
        )

    def _diff_for(
        self, tool: str, path: str, args: dict[str, Any], result: dict[str, Any]
    ) -> str | None:
        files = self.shared.files
        before = result.get("originalFile")
        before = before if isinstance(before, str) else files.get(path)
        hunks = result.get("structuredPatch")
        if tool == "Write":
            content = result.get("content", args.get("content"))
            if not isinstance(content, str):
                return None
            files.set(path, content)
            if hunks:
                return structured_patch_diff(path, hunks)
            if result.get("type") == "update" and before is not None:
                return text_diff(path, before, content)
            return new_file_diff(path, content)
        if hunks:
            diff = structured_patch_diff(path, hunks)
            self._track_after(path, before, diff)
            return diff
        return self._edit_without_patch(tool, path, args, before)

    def _edit_without_patch(
        self, tool: str, path: str, args: dict[str, Any], before: str | None
    ) -> str | None:
        edits = args.get("edits") if tool == "MultiEdit" else [args]
        pairs = [
            (
                str(e.get("old_string") or ""),
                str(e.get("new_string") or ""),
                bool(e.get("replace_all")),
            )
            for e in edits or []
            if isinstance(e, dict)
        ]
        if not pairs:
            return None
        if before is not None and all(old in before for old, _, _ in pairs):
            after = before
            for old, new, replace_all in pairs:
                after = after.replace(old, new) if replace_all else after.replace(old, new, 1)
            self.shared.files.set(path, after)
            return text_diff(path, before, after)
        # The file's content is unknown: a diff of the replaced snippet alone.
        self.shared.files.forget(path)
        return text_diff(
            path, "\n".join(p[0] for p in pairs) + "\n", "\n".join(p[1] for p in pairs) + "\n"
        )

    def _track_after(self, path: str, before: str | None, diff: str) -> None:
        if before is None:
            self.shared.files.forget(path)
            return
        try:
            self.shared.files.set(path, apply_unified_diff(before, diff))
        except ValueError:
            self.shared.files.forget(path)

    def _track_read(self, result: dict[str, Any]) -> None:
        file = result.get("file")
        if not isinstance(file, dict) or not isinstance(file.get("content"), str):
            return
        whole = file.get("startLine") in (None, 1) and file.get("numLines") == file.get(
            "totalLines"
        )
        if whole and isinstance(file.get("filePath"), str):
            self.shared.files.set(file["filePath"], file["content"])


def link_subagents(
    threads: dict[str, Thread], shared: Shared, thread_for_agent: dict[str, str]
) -> None:
    """Place a SUBAGENT_SPAWN event right after each spawning call and hang the thread under it."""
    for call_id, agent_id in shared.spawn_links:
        thread_id = thread_for_agent.get(agent_id)
        site = shared.calls.get(call_id)
        if thread_id is None or site is None or thread_id not in threads:
            continue
        spawn(threads[thread_id], site, shared)


def spawn(child: Thread, site: CallSite, shared: Shared) -> None:
    if child.parent_event is not None:
        return
    args = site.event.arguments if isinstance(site.event.arguments, dict) else {}
    title = args.get("description") or args.get("subagent_type") or child.title
    event = Event(
        id=shared.ids.next(),
        kind=EventKind.SUBAGENT_SPAWN,
        tool_name=site.event.tool_name,
        call_id=site.event.call_id,
        child_thread=child.id,
        text=str(title or ""),
        timestamp=site.event.timestamp,
        line=site.event.line,
    )
    events = site.turn.events
    events.insert(events.index(site.event) + 1, event)
    child.parent_thread = site.thread.id
    child.parent_event = event.id
    if title and not child.title:
        child.title = str(title)
