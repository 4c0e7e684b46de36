"""GitHub Copilot CLI session logs (~/.copilot/session-state/<id>/events.jsonl, or <id>.jsonl in
0.0.3xx), and the same events as `copilot -p --output-format json` prints them.

Every line is {type, data, id, timestamp, parentId}, with `agentId` on the events of a subagent
(older versions put `parentToolCallId` in data instead). user.message starts an exchange; each
assistant.message is one model call (chunks of one call share its apiCallId) with its text,
reasoningText and toolRequests; tool.execution_start/complete carry the calls and their results
(older versions write the start before the message that requested it); subagent.started names
the `task` call that spawned a subagent. session.* records become notices, compaction markers
and errors; streaming deltas and bookkeeping records are skipped; anything else is `unknown`.

Tokens. A printed stream has one assistant.usage record per model call: that call's input
(cache-inclusive), output and cache tokens. The session file keeps only each call's
`outputTokens`, and at every exit a session.shutdown with the segment's totals per model
(`modelMetrics.<model>.usage`: inputTokens including cacheReadTokens and cacheWriteTokens,
outputTokens including reasoning). A resumed session starts a segment whose shutdown counts from
zero again, so segments add up. What a shutdown holds beyond its calls' own output tokens is put
on the segment's last call of that model (per agent where `agentMetrics` splits it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .apply_patch import envelope_to_diffs, find_envelope
from .diffs import TrackedFiles, new_file_diff, text_diff
from .finish import finish_transcript
from .recorded_diffs import exact_diff
from .records import (
    EventIds,
    SourceFile,
    as_dict,
    as_str,
    as_text,
    capped_raw,
    each_jsonl_record,
)
from .schema import Event, EventKind, Thread, Transcript, Turn, Usage

FORMAT = "copilot-cli-events"

# Records that carry nothing to show: streaming pieces and state the page does not draw.
_SKIPPED = frozenset(
    {
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.message_start",
        "assistant.message_delta",
        "assistant.reasoning_delta",
        "assistant.streaming_delta",
        "assistant.tool_call_delta",
        "assistant.intent",
        "assistant.idle",
        "assistant.server_tool_progress",
        "tool.execution_partial_result",
        "tool.execution_progress",
        "tool.user_requested",
        "hook.start",
        "hook.end",
        "hook.progress",
        "pending_messages.modified",
        "permission.requested",
        "permission.completed",
        "session.idle",
        "session.usage_checkpoint",
        "session.usage_info",
        "session.auto_mode_resolved",
        "session.title_changed",
        "session.mode_changed",
        "session.plan_changed",
        "session.todos_changed",
        "session.workspace_file_changed",
        "session.context_changed",
        "session.tools_updated",
        "session.skills_loaded",
        "session.mcp_servers_loaded",
        "session.mcp_server_status_changed",
        "session.binary_asset",
        "session.permissions_changed",
        "session.session_limits_changed",
        "session.remote_steerable_changed",
        "session.compaction_start",
        "subagent.completed",
        "subagent.selected",
        "subagent.deselected",
    }
)
_FILE_TOOLS = frozenset({"edit", "create", "str_replace", "str_replace_editor", "write"})


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    per_call = any(source.contains(b'"assistant.usage"') for source in files)
    reader = _Reader(transcript, per_call_usage=per_call)
    each_jsonl_record(files, transcript.malformed, reader.record)
    reader.finish()
    return finish_transcript(transcript)


@dataclass(frozen=True)
class _Rec:
    """One line: the record, its `data`, its timestamp and its line number."""

    record: dict[str, Any]
    data: dict[str, Any]
    stamp: str | None
    line: int


@dataclass
class _Flow:
    """Where one thread (the main agent or a subagent) stands: its current model call."""

    thread: Thread
    turn: Turn | None = None
    api_call: str | None = None


@dataclass
class _Segment:
    """The model calls between a session start (or resume) and its shutdown."""

    turns: list[tuple[Thread, Turn]] = field(default_factory=list)


class _Reader:
    def __init__(self, transcript: Transcript, *, per_call_usage: bool) -> None:
        self.transcript = transcript
        self.per_call_usage = per_call_usage
        self.ids = EventIds()
        main = Thread(id="main", kind="main")
        transcript.threads.append(main)
        self.main = _Flow(main)
        self.flows: dict[str, _Flow] = {}
        self.calls: dict[str, tuple[Turn, Event]] = {}
        self.by_api_call: dict[str, Turn] = {}
        self.model: str | None = None
        self.segment = _Segment()
        self.shutdowns = 0
        self.files = TrackedFiles()

    def record(self, record: dict[str, Any], line: int) -> None:
        kind = record.get("type")
        r = _Rec(record, as_dict(record.get("data")), as_str(record.get("timestamp")), line)
        if not isinstance(kind, str):
            self._unknown(r, str(kind))
        elif kind in _HANDLERS:
            _HANDLERS[kind](self, r)
        elif kind in _SKIPPED:
            return
        elif kind.startswith(("session.", "system.")) and _message(r.data):
            self._notice(r, _message(r.data))
        else:
            self._unknown(r, kind)

    # -- session records ---------------------------------------------------------------------

    def _session_start(self, r: _Rec) -> None:
        t = self.transcript
        t.session_id = t.session_id or as_str(r.data.get("sessionId"))
        t.cli_version = t.cli_version or as_str(r.data.get("copilotVersion"))
        t.started_at = t.started_at or as_str(r.data.get("startTime"))
        self._context(as_dict(r.data.get("context")))
        self.model = as_str(r.data.get("selectedModel")) or self.model
        self.segment = _Segment()

    def _session_resume(self, r: _Rec) -> None:
        self._context(as_dict(r.data.get("context")))
        self.model = as_str(r.data.get("selectedModel")) or self.model
        self.segment = _Segment()
        self._notice(r, "Session resumed")

    def _context(self, context: dict[str, Any]) -> None:
        t = self.transcript
        t.cwd = t.cwd or as_str(context.get("cwd"))
        t.git_branch = t.git_branch or as_str(context.get("branch"))
        self.files.cwd = self.files.cwd or t.cwd

    def _model_change(self, r: _Rec) -> None:
        self.model = as_str(r.data.get("newModel")) or self.model

    def _session_error(self, r: _Rec) -> None:
        kind, text = as_str(r.data.get("errorType")), as_text(r.data.get("message"))
        self._notice(r, f"{kind}: {text}" if kind else text, is_error=True)

    def _truncation(self, r: _Rec) -> None:
        removed = r.data.get("tokensRemovedDuringTruncation")
        self._notice(r, "Context truncated" + (f": {removed} tokens removed" if removed else ""))

    def _compaction(self, r: _Rec) -> None:
        turn = self._new_turn(self._flow(r), r.stamp, model_call=False)
        if r.data.get("success") is False:
            text = "Compaction failed: " + as_text(r.data.get("error"))
            self._event(turn, EventKind.SYSTEM_NOTICE, r, text=text, is_error=True)
        else:
            self._event(turn, EventKind.COMPACTION, r, text=as_text(r.data.get("summaryContent")))

    def _abort(self, r: _Rec) -> None:
        self._notice(r, "Aborted: " + as_text(r.data.get("reason")))

    def _skill(self, r: _Rec) -> None:
        name = as_str(r.data.get("name")) or as_str(r.data.get("skillName")) or "?"
        self._notice(r, f"Skill invoked: {name}")

    # -- the conversation ------------------------------------------------------------------

    def _user(self, r: _Rec) -> None:
        text = as_text(r.data.get("content"))
        attached = [
            str(a.get("path") or a.get("displayName"))
            for a in r.data.get("attachments") or []
            if isinstance(a, dict) and (a.get("path") or a.get("displayName"))
        ]
        if attached:
            text += "\n\nAttached: " + ", ".join(attached)
        turn = self._new_turn(self._flow(r), r.stamp, model_call=False)
        # Skills inject hidden user messages; they are context, not the user's words.
        source = as_str(r.data.get("source")) or ""
        hidden = source.startswith("skill-") or text.startswith("<skill-context")
        self._event(turn, EventKind.SYSTEM_NOTICE if hidden else EventKind.USER_TEXT, r, text=text)

    def _assistant(self, r: _Rec) -> None:
        flow = self._flow(r)
        api_call = as_str(r.data.get("apiCallId"))
        if flow.turn is not None and api_call and api_call == flow.api_call:
            turn = flow.turn
        else:
            turn = self._model_turn(flow, r.stamp, as_str(r.data.get("model")) or self.model)
            flow.api_call = api_call
            if api_call:
                self.by_api_call[api_call] = turn
        reasoning = as_str(r.data.get("reasoningText"))
        if reasoning and not _has_text(turn, EventKind.REASONING, reasoning):
            self._event(turn, EventKind.REASONING, r, text=reasoning)
        content = as_text(r.data.get("content"))
        if content:
            self._event(turn, EventKind.ASSISTANT_TEXT, r, text=content)
        for request in r.data.get("toolRequests") or []:
            if isinstance(request, dict):
                self._call(turn, r, request.get("toolCallId"), request.get("name"), request)
        output = _int(r.data.get("outputTokens"))
        if output and not self.per_call_usage:
            # Chunks of one call may each repeat the call's count: the largest is the call's.
            usage = turn.usage or Usage()
            usage.output_tokens = max(usage.output_tokens, output)
            turn.usage = usage

    def _reasoning(self, r: _Rec) -> None:
        text = as_text(r.data.get("content"))
        if text:
            flow = self._flow(r)
            turn = flow.turn or self._model_turn(flow, r.stamp, self.model)
            if not _has_text(turn, EventKind.REASONING, text):
                # A stream prints the thinking after the message it led to: it goes first.
                self._event(turn, EventKind.REASONING, r, text=text)
                turn.events.insert(0, turn.events.pop())

    def _tool_start(self, r: _Rec) -> None:
        call_id = as_str(r.data.get("toolCallId"))
        if call_id and call_id in self.calls:
            return
        flow = self._flow(r)
        turn = flow.turn or self._model_turn(flow, r.stamp, as_str(r.data.get("model")))
        self._call(turn, r, call_id, r.data.get("toolName"), r.data)

    def _call(self, turn: Turn, r: _Rec, call_id: Any, name: Any, body: dict[str, Any]) -> None:
        call_id = call_id if isinstance(call_id, str) and call_id else None
        if call_id and call_id in self.calls:
            return
        event = self._event(
            turn,
            EventKind.TOOL_CALL,
            r,
            tool_name=str(name) if name else "?",
            call_id=call_id,
            arguments=_arguments(body.get("arguments")),
        )
        if call_id:
            self.calls[call_id] = (turn, event)

    def _tool_complete(self, r: _Rec) -> None:
        call_id = as_str(r.data.get("toolCallId"))
        found = self.calls.get(call_id or "\0")
        if found is None:
            flow = self._flow(r)
            turn, call = flow.turn or self._model_turn(flow, r.stamp, self.model), None
        else:
            turn, call = found
        result, error = r.data.get("result"), as_dict(r.data.get("error"))
        text = as_text(as_dict(result).get("content") if isinstance(result, dict) else result)
        if error:
            text = "\n".join(part for part in (as_text(error.get("message")), text) if part)
        is_error = r.data.get("success") is False or bool(error)
        self._event(
            turn,
            EventKind.TOOL_RESULT,
            r,
            tool_name=call.tool_name if call else None,
            call_id=call_id,
            text=text,
            is_error=is_error,
        )
        if call is not None and not is_error:
            self._file_changes(turn, call, as_dict(result), r)

    def _file_changes(self, turn: Turn, call: Event, result: dict[str, Any], r: _Rec) -> None:
        name = (call.tool_name or "").lower()
        args = call.arguments if isinstance(call.arguments, dict) else {}
        if name == "apply_patch":
            envelope = find_envelope(_flat(call.arguments))
            for found in envelope_to_diffs(envelope, self.files) if envelope else []:
                self._change(turn, call, found.move_to or found.path, found.diff, r)
            return
        path = as_str(args.get("path")) or as_str(args.get("file_path"))
        if name not in _FILE_TOOLS or not path:
            return
        command = as_str(args.get("command")) or ("create" if name in ("create", "write") else "")
        if name == "str_replace_editor" and command not in ("create", "str_replace", "insert"):
            return  # its view and undo commands change nothing we can show
        created = command == "create"
        detailed = as_str(result.get("detailedContent")) or ""
        diff = exact_diff(detailed, path, new_file=created) if "@@" in detailed else None
        if diff is None and created and isinstance(args.get("file_text"), str):
            diff = new_file_diff(path, args["file_text"])
        elif diff is None and isinstance(args.get("old_str"), str):
            diff = text_diff(path, args["old_str"], str(args.get("new_str") or ""))
        if diff is not None:
            self._change(turn, call, path, diff, r)

    def _change(self, turn: Turn, call: Event, path: str, diff: str, r: _Rec) -> None:
        self._event(
            turn,
            EventKind.FILE_CHANGE,
            r,
            tool_name=call.tool_name,
            call_id=call.call_id,
            path=path,
            diff=diff,
        )

    # -- subagents -------------------------------------------------------------------------

    def _subagent_started(self, r: _Rec) -> None:
        call_id = as_str(r.data.get("toolCallId"))
        key = as_str(r.record.get("agentId")) or call_id
        if not key:
            return
        flow = self._subagent(key)
        if call_id:
            self.flows[call_id] = flow
        title = as_str(r.data.get("agentDisplayName")) or as_str(r.data.get("agentName")) or key
        flow.thread.title = title
        found = self.calls.get(call_id or "\0")
        parent = self._owner(found[1]) if found else self.main.thread
        if parent is flow.thread:
            return
        turn = found[0] if found else (parent.turns[-1] if parent.turns else None)
        turn = turn or self._new_turn(self.main, r.stamp, model_call=False)
        spawn = Event(
            id=self.ids.next(),
            kind=EventKind.SUBAGENT_SPAWN,
            text=title,
            child_thread=flow.thread.id,
            tool_name=found[1].tool_name if found else None,
            call_id=call_id,
            timestamp=r.stamp,
            line=r.line,
        )
        position = turn.events.index(found[1]) + 1 if found else len(turn.events)
        turn.events.insert(position, spawn)
        flow.thread.parent_thread, flow.thread.parent_event = parent.id, spawn.id

    def _subagent_failed(self, r: _Rec) -> None:
        self._notice(r, "Subagent failed: " + as_text(r.data.get("error")), is_error=True)

    def _owner(self, event: Event) -> Thread:
        for thread in self.transcript.threads:
            if any(e is event for turn in thread.turns for e in turn.events):
                return thread
        return self.main.thread

    # -- tokens ----------------------------------------------------------------------------

    def _call_usage(self, r: _Rec) -> None:
        flow = self._flow(r)
        model = as_str(r.data.get("model")) or self.model
        turn = self.by_api_call.get(as_str(r.data.get("apiCallId")) or "\0") or flow.turn
        if turn is None or turn.usage is not None:
            turn = self._model_turn(flow, r.stamp, model)
        turn.model = turn.model or model
        turn.usage = _gross_usage(r.data)

    def _shutdown(self, r: _Rec) -> None:
        self.shutdowns += 1
        segment, self.segment = self.segment, _Segment()
        if self.per_call_usage:
            return
        agents = as_dict(r.data.get("agentMetrics"))
        for key, metrics in agents.items():
            flow = self.main if key == "main" else self._subagent(str(key))
            totals = _model_totals(as_dict(as_dict(metrics).get("modelMetrics")))
            self._charge(flow, segment, totals, r)
        if agents:
            return
        totals = _model_totals(as_dict(r.data.get("modelMetrics")))
        details = as_dict(r.data.get("tokenDetails"))
        if not totals and details:
            # Some builds write only the session-wide tokenDetails (input already uncached).
            model = as_str(r.data.get("currentModel")) or self.model or "(unnamed model)"
            totals = {model: _detail_usage(details)}
        self._charge(self.main, segment, totals, r, every_thread=True)

    def _charge(
        self,
        flow: _Flow,
        segment: _Segment,
        totals: dict[str, Usage],
        r: _Rec,
        *,
        every_thread: bool = False,
    ) -> None:
        """Put what each model's totals hold beyond its calls' own output on its last call (in
        any thread when the totals are not split by agent)."""
        for model, usage in totals.items():
            calls = [
                turn
                for thread, turn in segment.turns
                if turn.model == model and (every_thread or thread is flow.thread)
            ]
            counted = sum(turn.usage.output_tokens for turn in calls if turn.usage)
            usage.output_tokens = max(0, usage.output_tokens - counted)
            if usage.total_tokens == 0:
                continue
            target = calls[-1] if calls else self._new_turn(flow, r.stamp, model=str(model))
            if not calls:
                text = f"Tokens of {model} counted when the session closed"
                self._event(target, EventKind.SYSTEM_NOTICE, r, text=text)
            total = target.usage or Usage()
            total.add(usage)
            target.usage = total

    def finish(self) -> None:
        if self.per_call_usage or not self.transcript.events():
            return
        if self.shutdowns == 0:
            self.transcript.notes.append(
                "The log has no session.shutdown record: only each call's output tokens are "
                "known, not its input and cache tokens."
            )
        else:
            self.transcript.notes.append(
                "Copilot CLI records input and cache tokens only per session segment; each "
                "model's share is shown on the segment's last call of that model."
            )

    # -- building blocks -------------------------------------------------------------------

    def _flow(self, r: _Rec) -> _Flow:
        key = as_str(r.record.get("agentId")) or as_str(r.data.get("parentToolCallId"))
        return self._subagent(key) if key else self.main

    def _subagent(self, key: str) -> _Flow:
        flow = self.flows.get(key)
        if flow is None:
            thread = Thread(id=f"agent-{len(self.transcript.threads)}", kind="subagent", title=key)
            self.transcript.threads.append(thread)
            flow = self.flows[key] = _Flow(thread)
        return flow

    def _new_turn(
        self, flow: _Flow, stamp: str | None, *, model_call: bool = True, model: str | None = None
    ) -> Turn:
        turn = Turn(index=len(flow.thread.turns), timestamp=stamp, model=model)
        flow.thread.turns.append(turn)
        flow.turn = turn if model_call else None
        flow.api_call = None
        return turn

    def _model_turn(self, flow: _Flow, stamp: str | None, model: str | None) -> Turn:
        turn = self._new_turn(flow, stamp, model=model or self.model)
        self.segment.turns.append((flow.thread, turn))
        return turn

    def _event(self, turn: Turn, kind: EventKind, r: _Rec, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=r.line, timestamp=r.stamp, **fields)
        turn.events.append(event)
        return event

    def _last_turn(self, r: _Rec) -> Turn:
        flow = self._flow(r)
        turn = flow.turn or (flow.thread.turns[-1] if flow.thread.turns else None)
        return turn or self._new_turn(flow, r.stamp, model_call=False)

    def _notice(self, r: _Rec, text: str, *, is_error: bool = False) -> None:
        self._event(self._last_turn(r), EventKind.SYSTEM_NOTICE, r, text=text, is_error=is_error)

    def _unknown(self, r: _Rec, kind: str) -> None:
        self._event(
            self._last_turn(r), EventKind.UNKNOWN, r, raw_type=kind, raw=capped_raw(r.record)
        )


_HANDLERS: dict[str, Callable[[_Reader, _Rec], None]] = {
    "session.start": _Reader._session_start,
    "session.resume": _Reader._session_resume,
    "session.model_change": _Reader._model_change,
    "session.error": _Reader._session_error,
    "session.truncation": _Reader._truncation,
    "session.compaction_complete": _Reader._compaction,
    "session.shutdown": _Reader._shutdown,
    "user.message": _Reader._user,
    "assistant.message": _Reader._assistant,
    "assistant.reasoning": _Reader._reasoning,
    "assistant.usage": _Reader._call_usage,
    "tool.execution_start": _Reader._tool_start,
    "tool.execution_complete": _Reader._tool_complete,
    "subagent.started": _Reader._subagent_started,
    "subagent.failed": _Reader._subagent_failed,
    "skill.invoked": _Reader._skill,
    "abort": _Reader._abort,
}


def _gross_usage(raw: Any) -> Usage:
    """Copilot's inputTokens include the cache reads and writes; ours never do."""
    usage = as_dict(raw)
    read, write = _int(usage.get("cacheReadTokens")), _int(usage.get("cacheWriteTokens"))
    return Usage(
        input_tokens=max(0, _int(usage.get("inputTokens")) - read - write),
        output_tokens=_int(usage.get("outputTokens")),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _model_totals(metrics: dict[str, Any]) -> dict[str, Usage]:
    """modelMetrics: {model: {requests, usage}}; a model without usage is left out."""
    return {
        str(model): _gross_usage(as_dict(metric).get("usage"))
        for model, metric in metrics.items()
        if isinstance(as_dict(metric).get("usage"), dict)
    }


def _detail_usage(details: dict[str, Any]) -> Usage:
    def count(name: str) -> int:
        return _int(as_dict(details.get(name)).get("tokenCount"))

    return Usage(count("input"), count("output"), count("cache_read"), count("cache_write"))


def _message(data: dict[str, Any]) -> str:
    return (
        as_str(data.get("message"))
        or as_str(data.get("content"))
        or as_str(data.get("summary"))
        or ""
    )


def _arguments(value: Any) -> Any:
    """Tool arguments as the log gave them; a JSON string is parsed."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _flat(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_flat(v) for v in value.values())
    return ""


def _has_text(turn: Turn, kind: EventKind, text: str) -> bool:
    return any(e.kind == kind and e.text == text for e in turn.events)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
