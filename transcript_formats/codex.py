"""Codex CLI rollout files (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl) and the legacy format.

A rollout line is {timestamp, type, payload} with type session_meta, response_item (the model's
messages, reasoning, tool calls and their outputs), event_msg (token counts, patch results,
errors), turn_context (model, cwd) or compacted. The legacy format (before rollouts had
envelopes) is a first line {id, timestamp, instructions} followed by bare response items.

Tokens: token_count events carry the session's cumulative total_token_usage, repeated
unchanged several times; each model call is charged the delta from the previous total, so
repeats add nothing. OpenAI's input_tokens include the cached part; we report input without it.

File changes: apply_patch calls (custom_tool_call, function_call, or a shell command carrying the
envelope) become unified diffs with line numbers found in the tracked file; a later
patch_apply_end with Codex's own unified_diff replaces a diff whose line numbers we had to guess.

Subagents are rollouts whose session_meta.source is {"subagent": {"thread_spawn": {
"parent_thread_id": ...}}}; they hang under the parent's call that names their id, or else under
the parent's turn that was running when they started.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any

from .apply_patch import FileDiff, envelope_to_diffs, find_envelope
from .diffs import TrackedFiles, deleted_file_diff, new_file_diff, with_header
from .disk_texts import held
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
    iter_jsonl_spans,
    line_text,
    record_not_understood,
)
from .schema import Event, EventKind, MalformedLine, Thread, Transcript, Turn, Usage

FORMAT = "codex-rollout"

_NOTICE_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<permissions",
    "<user_shell_command>",
    "<turn_aborted>",
)
_SILENT_EVENTS = frozenset(
    {
        "exec_command_begin",
        "exec_command_end",
        "exec_command_output_delta",
        "patch_apply_begin",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "task_started",
        "turn_diff",
        "web_search_begin",
        "web_search_end",
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "agent_message_delta",
        "agent_reasoning_delta",
        "item_started",
        "item_completed",
        "thread_settings_applied",
        "shutdown_complete",
        "session_configured",
        "background_event",
        "plan_update",
        "context_compacted",
        "view_image_tool_call",
        "raw_response_item",
        "get_history_entry_response",
        "mcp_list_tools_response",
        "list_custom_prompts_response",
        "entered_review_mode",
        "exited_review_mode",
        "deprecation_notice",
        "undo_started",
        "undo_completed",
        "sub_agent_activity",
        "mcp_startup_update",
        "mcp_startup_complete",
        "user_message",
        "agent_message",
        "agent_reasoning",
    }
)
# Undo snapshots of the workspace: bookkeeping, not conversation.
_SILENT_ITEMS = frozenset({"ghost_snapshot"})
# Codex 0.17x: token_usage_record repeats each call's usage that token_count already gave (it
# would count twice); world_state snapshots the environment the model is told of.
_SILENT_RECORDS = frozenset({"token_usage_record", "world_state"})
_EXIT_CODE = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)", re.MULTILINE)


@dataclass
class Rollout:
    """One rollout file. Its records are read again on each pass, never all held at once."""

    source: SourceFile
    meta: dict[str, Any] = field(default_factory=dict)
    legacy_meta_line: int | None = None  # the legacy format's first line is the meta itself
    first_is_meta: bool = False

    def records(
        self, malformed: list[MalformedLine]
    ) -> Iterator[tuple[int, tuple[int, int], dict[str, Any]]]:
        return iter_jsonl_spans(self.source, malformed)

    @property
    def session_id(self) -> str | None:
        value = self.meta.get("id") or self.meta.get("session_id")
        return value if isinstance(value, str) else None

    @property
    def spawn(self) -> dict[str, Any] | None:
        """The subagent's origin, or None for a session a person started."""
        source = self.meta.get("source")
        if not isinstance(source, dict) or "subagent" not in source:
            return None
        sub = source.get("subagent")
        spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
        out = dict(spawn) if isinstance(spawn, dict) else {}
        out.setdefault("parent_thread_id", self.meta.get("parent_thread_id"))
        for key in ("agent_nickname", "agent_path", "agent_role"):
            out.setdefault(key, self.meta.get(key))
        return out


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    rollouts = [_read(source) for source in files]
    rollouts.sort(key=lambda r: (r.spawn is not None, str(r.meta.get("timestamp") or "")))
    ids = EventIds()
    files_seen = TrackedFiles()
    threads: list[tuple[Rollout, Thread]] = []
    for number, rollout in enumerate(rollouts):
        main = number == 0
        thread = Thread(
            id="main" if main else f"agent-{rollout.session_id or number}",
            kind="main" if main else "subagent",
        )
        if main:
            _describe(transcript, rollout)
            files_seen.cwd = transcript.cwd
        CodexBuilder(thread, ids, files_seen, transcript).run(rollout)
        threads.append((rollout, thread))
        transcript.threads.append(thread)
    _link_subagents(threads, ids)
    return finish_transcript(transcript)


def _read(source: SourceFile) -> Rollout:
    """The rollout's meta, from its first records (bad lines are reported by the full pass)."""
    rollout = Rollout(source)
    for index, (line, record) in enumerate(islice(iter_jsonl(source, []), 5)):
        if record.get("type") == "session_meta" and isinstance(record.get("payload"), dict):
            rollout.meta = record["payload"]
            break
        if "type" not in record and "id" in record and "timestamp" in record:
            rollout.meta = record  # legacy first line
            rollout.legacy_meta_line, rollout.first_is_meta = line, index == 0
            break
    return rollout


def _describe(transcript: Transcript, rollout: Rollout) -> None:
    meta = rollout.meta
    transcript.session_id = rollout.session_id
    transcript.cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
    transcript.cli_version = (
        meta.get("cli_version") if isinstance(meta.get("cli_version"), str) else None
    )
    git = meta.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str):
        transcript.git_branch = git["branch"]
    if meta and rollout.first_is_meta:
        transcript.format = "codex-rollout-legacy"


class CodexBuilder:
    """Builds one thread from one rollout."""

    def __init__(
        self, thread: Thread, ids: EventIds, files: TrackedFiles, transcript: Transcript
    ) -> None:
        self.thread, self.ids, self.files, self.transcript = thread, ids, files, transcript
        self.model: str | None = None
        self._current: Turn | None = None
        self._model_turn: Turn | None = None  # the model call still receiving items
        self._last_model_turn: Turn | None = None
        self._calls: dict[str, tuple[Turn, Event]] = {}
        self._patches: dict[str, list[tuple[Event, FileDiff | None]]] = {}
        self._last_total: tuple[int, int, int] | None = None
        self._has_items: set[str] = set()
        self._tool_searches: list[tuple[Turn, Event]] = []  # searches awaiting their output
        self._source: SourceFile | None = None
        self._span = (0, 0)  # the record being read: its line's place in the file

    def run(self, rollout: Rollout) -> None:
        self._has_items = _item_kinds(rollout.source)
        self._source = rollout.source
        for line, span, record in rollout.records(self.transcript.malformed):
            self._span = span
            try:
                self._record(rollout, record, line)
            except RECORD_ERRORS as exc:
                record_not_understood(self.transcript.malformed, rollout.source.name, line, exc)

    def _record(self, rollout: Rollout, record: dict[str, Any], line: int) -> None:
        kind = record.get("type")
        payload = record.get("payload")
        stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        if isinstance(payload, dict):
            self._enveloped(str(kind), payload, record, stamp, line)
        elif kind in _RESPONSE_ITEMS:
            self._item(record, stamp, line)
        elif line == rollout.legacy_meta_line or record.get("record_type") == "state":
            return
        else:
            self._unknown(record, str(kind or record.get("record_type")), stamp, line)

    # -- dispatch --------------------------------------------------------------------------

    def _enveloped(
        self,
        kind: str,
        payload: dict[str, Any],
        record: dict[str, Any],
        stamp: str | None,
        line: int,
    ) -> None:
        if kind == "session_meta" or kind in _SILENT_RECORDS:
            return
        if kind == "turn_context":
            model = payload.get("model")
            self.model = model if isinstance(model, str) else self.model
            self.transcript.model = self.transcript.model or self.model
        elif kind == "response_item":
            self._item(payload, stamp, line)
        elif kind == "event_msg":
            self._event_msg(payload, stamp, line)
        elif kind == "compacted":
            turn = self._new_turn(stamp)
            text = payload.get("message") if isinstance(payload.get("message"), str) else ""
            self._event(
                turn,
                EventKind.COMPACTION,
                line,
                stamp,
                text="Conversation compacted" + (f"\n\n{text}" if text else ""),
            )
        else:
            self._unknown(record, kind, stamp, line)

    def _unknown(self, record: dict[str, Any], kind: str, stamp: str | None, line: int) -> None:
        turn = self._current or self._new_turn(stamp)
        self._event(turn, EventKind.UNKNOWN, line, stamp, raw_type=kind, raw=capped_raw(record))

    # -- turns -----------------------------------------------------------------------------

    def _new_turn(self, stamp: str | None, model: str | None = None) -> Turn:
        turn = Turn(index=len(self.thread.turns), timestamp=stamp, model=model)
        self.thread.turns.append(turn)
        self._current = turn
        return turn

    def _model_call(self, stamp: str | None) -> Turn:
        if self._model_turn is None:
            self._model_turn = self._new_turn(stamp, self.model)
            self._last_model_turn = self._model_turn
        return self._model_turn

    def _event(
        self, turn: Turn, kind: EventKind, line: int, stamp: str | None, **fields: Any
    ) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, timestamp=stamp, **fields)
        turn.events.append(event)
        return event

    def _held(self, text: str, extract: Callable[[dict[str, Any]], str]) -> str:
        """A long text kept as its line's place in the file, read again when written."""
        assert self._source is not None
        return line_text(self._source, self._span, text, extract)

    # -- response items --------------------------------------------------------------------

    def _item(self, item: dict[str, Any], stamp: str | None, line: int) -> None:
        kind = item.get("type")
        if kind == "message":
            self._message(item, stamp, line)
        elif kind == "reasoning":
            self._event(
                self._model_call(stamp),
                EventKind.REASONING,
                line,
                stamp,
                text=self._held(_reasoning_text(item), _record_reasoning),
            )
        elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            self._call(item, stamp, line)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item, stamp, line)
        elif kind == "tool_search_call":
            self._tool_search_call(item, stamp, line)
        elif kind == "tool_search_output":
            self._tool_search_output(item, stamp, line)
        elif kind in ("compaction", "compaction_summary"):
            text = item.get("summary") or item.get("message")
            self._event(
                self._new_turn(stamp),
                EventKind.COMPACTION,
                line,
                stamp,
                text="Conversation compacted" + (f"\n\n{text}" if isinstance(text, str) else ""),
            )
        elif kind in _SILENT_ITEMS:
            return
        else:
            self._unknown(item, f"response_item:{kind}", stamp, line)

    def _message(self, item: dict[str, Any], stamp: str | None, line: int) -> None:
        role = item.get("role")
        text = as_text(item.get("content"))
        if role == "assistant":
            self._event(self._model_call(stamp), EventKind.ASSISTANT_TEXT, line, stamp, text=text)
            return
        self._model_turn = None
        if role == "user" and not text.lstrip().startswith(_NOTICE_PREFIXES):
            images = images_of(item.get("content"))
            turn = self._new_turn(stamp)
            self._event(turn, EventKind.USER_TEXT, line, stamp, text=text, images=images)
        else:
            turn = self._current or self._new_turn(stamp)
            self._event(turn, EventKind.SYSTEM_NOTICE, line, stamp, text=text)

    def _call(self, item: dict[str, Any], stamp: str | None, line: int) -> None:
        turn = self._model_call(stamp)
        call_id = str(item.get("call_id") or item.get("id") or "")
        name, arguments = _call_name_and_arguments(item)
        event = self._event(
            turn,
            EventKind.TOOL_CALL,
            line,
            stamp,
            tool_name=name,
            call_id=call_id or None,
            arguments=arguments,
        )
        if call_id:
            self._calls[call_id] = (turn, event)
        envelope = (
            find_envelope(_strings(arguments)) if "*** Begin Patch" in str(arguments) else None
        )
        if envelope is not None:
            self._patch(turn, call_id, name, envelope, stamp, line)

    def _patch(
        self, turn: Turn, call_id: str, name: str, envelope: str, stamp: str | None, line: int
    ) -> None:
        entries = self._patches.setdefault(call_id, [])
        for file_diff in envelope_to_diffs(envelope, self.files):
            event = self._event(
                turn,
                EventKind.FILE_CHANGE,
                line,
                stamp,
                tool_name=name,
                call_id=call_id or None,
                path=file_diff.move_to or file_diff.path,
                diff=file_diff.diff,
            )
            # The diff is the event's (on disk, for an upload): the entry keeps the rest.
            entries.append((event, replace(file_diff, diff="")))

    def _output(self, item: dict[str, Any], stamp: str | None, line: int) -> None:
        call_id = str(item.get("call_id") or "")
        turn, call = self._calls.get(call_id, (None, None))
        text, is_error = _output_text(item.get("output"))
        target = turn or self._current or self._new_turn(stamp)
        self._event(
            target,
            EventKind.TOOL_RESULT,
            line,
            stamp,
            text=self._held(text, _record_output),
            call_id=call_id or None,
            tool_name=call.tool_name if call else None,
            is_error=is_error,
            images=images_of(item.get("output")),
        )
        if is_error:
            for event, _ in self._patches.get(call_id, []):
                event.is_error = True
        self._model_turn = None  # the next item comes from a new model call

    def _tool_search_call(self, item: dict[str, Any], stamp: str | None, line: int) -> None:
        """The model asking Codex (or the server) to load the tools that match a query."""
        turn = self._model_call(stamp)
        call_id = str(item.get("call_id") or item.get("id") or "")
        arguments = item.get("arguments")  # an object; a string in some versions
        if isinstance(arguments, str) and arguments.startswith("{"):
            arguments = _call_name_and_arguments({"arguments": arguments})[1]
        event = self._event(
            turn,
            EventKind.TOOL_CALL,
            line,
            stamp,
            tool_name="tool_search",
            call_id=call_id or None,
            arguments=arguments,
        )
        self._tool_searches.append((turn, event))

    def _tool_search_output(self, item: dict[str, Any], stamp: str | None, line: int) -> None:
        """The tools a search loaded, beside its call. A server-side search's output may carry
        no call id: it answers the latest search still waiting for one."""
        call_id = str(item.get("call_id") or "")
        waiting = self._tool_searches
        matches = [i for i, (_, e) in enumerate(waiting) if not call_id or e.call_id == call_id]
        turn, call = waiting.pop(matches[-1]) if matches else (None, None)
        self._event(
            turn or self._current or self._new_turn(stamp),
            EventKind.TOOL_RESULT,
            line,
            stamp,
            text=_tool_search_text(item.get("tools")),
            tool_name="tool_search",
            call_id=call_id or (call.call_id if call else None),
            is_error=item.get("status") in ("failed", "incomplete"),
        )
        if item.get("execution") != "server":
            self._model_turn = None  # Codex ran it: the model reads the tools in its next call

    # -- events ----------------------------------------------------------------------------

    def _event_msg(self, payload: dict[str, Any], stamp: str | None, line: int) -> None:
        kind = payload.get("type")
        if kind == "token_count":
            self._token_count(payload)
        elif kind == "patch_apply_end":
            self._patch_end(payload, stamp, line)
        elif kind in ("turn_aborted", "error", "stream_error"):
            turn = self._current or self._new_turn(stamp)
            text = payload.get("message") or payload.get("reason") or kind
            self._event(
                turn,
                EventKind.SYSTEM_NOTICE,
                line,
                stamp,
                text=f"{kind}: {text}",
                is_error=kind != "stream_error",
            )
        elif kind == "task_complete":
            last = payload.get("last_agent_message")
            if isinstance(last, str) and self.thread.kind == "main":
                self.transcript.final_text = last
        elif (
            kind in ("user_message", "agent_message", "agent_reasoning")
            and kind not in self._has_items
        ):
            self._event_only_message(str(kind), payload, stamp, line)
        elif kind not in _SILENT_EVENTS:
            self._unknown(payload, f"event_msg:{kind}", stamp, line)

    def _event_only_message(
        self, kind: str, payload: dict[str, Any], stamp: str | None, line: int
    ) -> None:
        """Rollouts that never persisted response items tell the conversation through events."""
        text = str(payload.get("message") or payload.get("text") or "")
        if kind == "user_message":
            self._model_turn = None
            self._event(self._new_turn(stamp), EventKind.USER_TEXT, line, stamp, text=text)
        elif kind == "agent_message":
            self._event(self._model_call(stamp), EventKind.ASSISTANT_TEXT, line, stamp, text=text)
        else:
            self._event(self._model_call(stamp), EventKind.REASONING, line, stamp, text=text)

    def _token_count(self, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        usage: Usage | None
        if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
            usage = self._delta(info["total_token_usage"], info.get("last_token_usage"))
        elif "input_tokens" in payload:
            usage = codex_usage(payload)  # early versions: one call's usage, not a running total
        else:
            usage = None
        if usage is None:
            return
        turn = self._last_model_turn or self._current or self._new_turn(None)
        if turn.usage is None:
            turn.usage = usage
        else:
            turn.usage.add(usage)
        self._model_turn = None

    def _delta(self, total: dict[str, Any], last: Any) -> Usage | None:
        now = (
            _int(total.get("input_tokens")),
            _int(total.get("cached_input_tokens")),
            _int(total.get("output_tokens")),
        )
        before = self._last_total
        self._last_total = now
        if before == now:
            return None  # the same total repeated: no new model call
        if before is None or any(n < b for n, b in zip(now, before, strict=True)):
            # The first total, or a total that went down (a new session in the same file).
            fresh = before is not None and isinstance(last, dict)
            return codex_usage(last if fresh else total)
        return Usage(
            input_tokens=(now[0] - before[0]) - (now[1] - before[1]),
            cache_read_tokens=now[1] - before[1],
            output_tokens=now[2] - before[2],
        )

    def _patch_end(self, payload: dict[str, Any], stamp: str | None, line: int) -> None:
        call_id = str(payload.get("call_id") or "")
        entries = self._patches.setdefault(call_id, [])
        failed = payload.get("success") is False
        changes = payload.get("changes")
        for path, change in changes.items() if isinstance(changes, dict) else []:
            diff = _change_diff(str(path), change)
            match = next((e for e in entries if _same_file(e[0].path, str(path))), None)
            if match is not None:
                event, known = match
                if diff is not None and (known is None or not known.exact):
                    event.diff = held(diff)
                event.is_error = event.is_error or failed
                continue
            if diff is None:
                continue
            turn = (
                self._calls[call_id][0]
                if call_id in self._calls
                else (self._current or self._new_turn(stamp))
            )
            event = self._event(
                turn,
                EventKind.FILE_CHANGE,
                line,
                stamp,
                tool_name="apply_patch",
                call_id=call_id or None,
                path=str(path),
                diff=diff,
                is_error=failed,
            )
            entries.append((event, None))
        if failed:
            for event, _ in entries:
                event.is_error = True


_RESPONSE_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)


def _item_kinds(source: SourceFile) -> set[str]:
    """Which event_msg kinds are already told by response items (so events would repeat them)."""
    kinds: set[str] = set()
    for _, record in iter_jsonl(source, [], only_if=(b'"message"', b'"reasoning"')):
        item = record.get("payload") if record.get("type") == "response_item" else record
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            kinds.add("user_message" if item.get("role") == "user" else "agent_message")
        elif item.get("type") == "reasoning":
            kinds.add("agent_reasoning")
        if len(kinds) == 3:
            break
    return kinds


def _record_item(record: dict[str, Any]) -> dict[str, Any]:
    payload = record.get("payload")
    return payload if isinstance(payload, dict) else record


def _record_output(record: dict[str, Any]) -> str:
    return _output_text(_record_item(record).get("output"))[0]


def _record_reasoning(record: dict[str, Any]) -> str:
    return _reasoning_text(_record_item(record))


def _strings(value: Any) -> str:
    """Every string inside a call's arguments, so an envelope in a shell heredoc is found."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return ""


def _tool_search_text(tools: Any) -> str:
    """What a tool search loaded, one tool a line; a namespace's tools read namespace.name."""
    lines = []
    for tool in tools if isinstance(tools, list) else []:
        inner = as_dict(tool).get("tools")
        members = inner if isinstance(inner, list) and inner else [tool]
        prefix = f"{as_dict(tool).get('name')}." if members is inner else ""
        for member in members:
            if isinstance(member, dict):
                name, description = member.get("name"), member.get("description")
                about = f": {description}" if isinstance(description, str) and description else ""
                lines.append(f"{prefix}{name if isinstance(name, str) else '?'}{about}")
    if not lines:
        return "No tools found"
    return f"Loaded {len(lines)} tool{'' if len(lines) == 1 else 's'}:\n" + "\n".join(lines)


def _reasoning_text(item: dict[str, Any]) -> str:
    parts = [as_text(item.get("summary")), as_text(item.get("content"))]
    text = "\n\n".join(p for p in parts if p)
    if not text and item.get("encrypted_content"):
        return "[encrypted reasoning]"
    return text


def _call_name_and_arguments(item: dict[str, Any]) -> tuple[str, Any]:
    kind = item.get("type")
    if kind == "local_shell_call":
        action = as_dict(item.get("action"))
        return "local_shell", {
            "command": action.get("command"),
            "workdir": action.get("working_directory"),
        }
    if kind == "web_search_call":
        return "web_search", item.get("action")
    name = str(item.get("name") or "?")
    namespace = item.get("namespace")  # a tool a tool_search loaded: calendar.create_event
    name = f"{namespace}.{name}" if isinstance(namespace, str) and namespace else name
    if kind == "custom_tool_call":
        return name, item.get("input")
    raw = item.get("arguments")
    if isinstance(raw, str):
        try:
            return name, json.loads(raw)
        except ValueError:
            return name, raw
    return name, raw


def _output_text(output: Any) -> tuple[str, bool]:
    """A tool output's text and whether it failed (a non-zero exit code or success: false)."""
    if isinstance(output, str):
        try:
            decoded = json.loads(output) if output.startswith("{") else None
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and "output" in decoded:
            meta = as_dict(decoded.get("metadata"))
            code = meta.get("exit_code")
            return as_text(decoded["output"]), isinstance(code, int) and code != 0
        match = _EXIT_CODE.search(output[:200])
        return output, bool(match and match.group(1) != "0")
    if isinstance(output, dict):
        text = as_text(output.get("content", output.get("output")))
        return text, output.get("success") is False
    return as_text(output), False


def _change_diff(path: str, change: Any) -> str | None:
    """A patch_apply_end change: {type, unified_diff, move_path} or the older {update: {...}}."""
    if not isinstance(change, dict):
        return None
    kind = change.get("type")
    body = change
    for key in ("add", "delete", "update"):
        if isinstance(change.get(key), dict):
            kind, body = key, change[key]
    if kind == "add" and isinstance(body.get("content"), str):
        return new_file_diff(path, body["content"])
    if kind == "delete":
        content = body.get("content")
        return deleted_file_diff(path, content if isinstance(content, str) else None)
    diff = body.get("unified_diff")
    if kind == "update" and isinstance(diff, str) and diff.strip():
        move = body.get("move_path")
        return with_header(path, diff, new_path=move if isinstance(move, str) else None)
    return None


def _same_file(a: str | None, b: str) -> bool:
    if not a:
        return False
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def codex_usage(raw: Any) -> Usage:
    """One model call's usage from Codex's token fields; input is reported without its cached
    part (Codex counts cached tokens inside input_tokens)."""
    raw = raw if isinstance(raw, dict) else {}
    cached = _int(raw.get("cached_input_tokens"))
    return Usage(
        input_tokens=max(0, _int(raw.get("input_tokens")) - cached),
        cache_read_tokens=cached,
        output_tokens=_int(raw.get("output_tokens")),
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _link_subagents(threads: list[tuple[Rollout, Thread]], ids: EventIds) -> None:
    by_session = {r.session_id: t for r, t in threads if r.session_id}
    main = threads[0][1] if threads else None
    for rollout, thread in threads[1:]:
        spawn = rollout.spawn or {}
        parent = by_session.get(str(spawn.get("parent_thread_id"))) or main
        if parent is None or parent is thread:
            continue
        name = spawn.get("agent_nickname") or spawn.get("agent_path") or spawn.get("agent_role")
        thread.title = str(name or rollout.session_id or "subagent")
        turn, after = _spawn_site(parent, rollout)
        event = Event(
            id=ids.next(),
            kind=EventKind.SUBAGENT_SPAWN,
            child_thread=thread.id,
            text=thread.title,
            tool_name=after.tool_name if after else None,
            call_id=after.call_id if after else None,
            timestamp=str(rollout.meta.get("timestamp") or "") or None,
        )
        position = turn.events.index(after) + 1 if after is not None else len(turn.events)
        turn.events.insert(position, event)
        thread.parent_thread, thread.parent_event = parent.id, event.id


def _spawn_site(parent: Thread, rollout: Rollout) -> tuple[Turn, Event | None]:
    """The call whose result names the subagent, else the parent's turn running when it began."""
    session_id = rollout.session_id or "\0"
    for turn in parent.turns:
        for event in turn.events:
            if event.kind == EventKind.TOOL_RESULT and session_id in event.text:
                call = next(
                    (
                        e
                        for e in turn.events
                        if e.kind == EventKind.TOOL_CALL and e.call_id == event.call_id
                    ),
                    event,
                )
                return turn, call
    started = str(rollout.meta.get("timestamp") or "")
    chosen = parent.turns[0] if parent.turns else _empty_turn(parent)
    for turn in parent.turns:
        if turn.timestamp and started and turn.timestamp <= started:
            chosen = turn
    return chosen, None


def _empty_turn(thread: Thread) -> Turn:
    turn = Turn(index=0)
    thread.turns.append(turn)
    return turn
