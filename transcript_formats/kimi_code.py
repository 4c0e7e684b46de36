"""Kimi Code CLI sessions: the wire journal of protocol 1.x (`~/.kimi-code/sessions/<work dir
id>/<session id>/agents/<agent id>/wire.jsonl`; the main agent is `agents/main`).

The journal opens with `{"type": "metadata", "protocol_version", "created_at"}`; every other
line is one record `{"type", ...payload, "time"}` (epoch milliseconds), its payload spread at the
top level. What a reader of the run needs:

- `context.append_message`: a message entering the model's context, `{role: user | assistant |
  tool | system, content: parts (text, think, image_url), toolCalls: [{id, name, arguments}],
  toolCallId, isError, origin}`. Protocol 1.0 nested a call's name and arguments in `function`.
- `context.append_loop_event`: the model's output as it streamed, one event a line: step.begin
  (one model call), content.part, tool.call `{toolCallId, name, args}`, tool.result
  `{toolCallId, result: {output, isError}}`, step.end (its `usage`).
- `usage.record`: the tokens of one model call `{model, usage: {inputOther, output,
  inputCacheRead, inputCacheCreation}}`, the journal's own count. Where a log has none, a
  step.end's `usage` is counted instead; the two are never added.
- `context.apply_compaction` (its summary), `turn.ended` (an error), `config.update` (the
  working folder and the model).

`turn.prompt` repeats the prompt that `context.append_message` records, and the other record
types (`tools.*`, `llm.*`, `permission.*`, `token_counting.*`, ...) are the session's settings
and telemetry: read and not shown. A type this reader does not know is shown as it is.
"""

from __future__ import annotations

import re
from typing import Any

from .anthropic_messages import Shared, ThreadBuilder
from .epoch import iso_from_epoch
from .finish import finish_transcript
from .log_format import LogFormat
from .records import (
    SourceFile,
    as_dict,
    as_str,
    as_text,
    each_jsonl_record,
    json_arguments,
    unknown_event,
)
from .schema import EventKind, Thread, Transcript, Turn, Usage
from .spawns import spawn_after

FORMAT = "kimi-code-wire"

# Every record type of protocol 1.0-1.5 this reader takes as read, whether or not it shows it.
KNOWN_TYPES = frozenset(
    {
        "metadata",
        "config.update",
        "context.append_loop_event",
        "context.append_message",
        "context.apply_compaction",
        "context.clear",
        "context.undo",
        "cron.add",
        "cron.cursor",
        "cron.delete",
        "file_history.checkpoint",
        "file_history.tracked",
        "forked",
        "full_compaction.begin",
        "full_compaction.cancel",
        "full_compaction.complete",
        "goal.account_usage",
        "goal.clear",
        "goal.continuation",
        "goal.create",
        "goal.update",
        "interaction.request",
        "interaction.resolved",
        "interruptionReminder.recorded",
        "llm.request",
        "llm.response",
        "llm.tools_snapshot",
        "mcp.tools_discovered",
        "permission.record_approval_result",
        "permission.set_mode",
        "plan.revision",
        "plan_mode.cancel",
        "plan_mode.enter",
        "plan_mode.exit",
        "plugin.session_start",
        "profile.bind",
        "prompt.accepted",
        "runtime.set_binding",
        "staleGuard.cleared",
        "staleGuard.recorded",
        "swarm_mode.enter",
        "swarm_mode.exit",
        "task.started",
        "task.terminated",
        "task.waitDelivered",
        "token_counting.measured",
        "token_counting.rebased",
        "token_counting.truncated",
        "token_counting.turn_recorded",
        "tools.register_user_tool",
        "tools.reset_active_tools",
        "tools.set_active_tools",
        "tools.unregister_user_tool",
        "tools.update_store",
        "tower_mode.enter",
        "tower_mode.exit",
        "turn.cancel",
        "turn.ended",
        "turn.prompt",
        "turn.steer",
        "turn.step.retrying",
        "usage.record",
    }
)
# Types only this journal writes: detection keys on them (metadata alone is Kimi CLI's too).
_MARKS = frozenset(
    {
        "turn.prompt",
        "context.append_message",
        "context.append_loop_event",
        "tools.set_active_tools",
        "usage.record",
        "llm.request",
    }
)
# Prompts the harness wrote, not the user: shown as notices.
_HARNESS_ORIGINS = frozenset(
    {"injection", "system_trigger", "hook_result", "compaction_summary", "task", "retry"}
)


def looks_like(records: list[dict[str, Any]]) -> bool:
    return any(as_str(r.get("type")) in _MARKS or _is_header(r) for r in records)


def _is_header(record: dict[str, Any]) -> bool:
    # Kimi CLI's wire files open with a metadata line too, but carry no `created_at`.
    return record.get("type") == "metadata" and "created_at" in record


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    shared = Shared()
    agents = sorted(files, key=lambda f: (_agent_id(f.name) != "main", f.name))
    main_id = _agent_id(agents[0].name) if agents else "main"
    for source in agents:
        agent = _agent_id(source.name)
        is_main = agent == main_id
        thread = Thread(
            id="main" if is_main else f"agent-{agent}",
            kind="main" if is_main else "subagent",
            title="" if is_main else agent,
        )
        transcript.threads.append(thread)
        reader = _Reader(transcript, thread, shared, source.name)
        each_jsonl_record([source], transcript.malformed, reader.record)
        reader.close()
    if not transcript.threads:
        transcript.threads.append(Thread(id="main"))
    for thread in transcript.threads[1:]:
        _link(transcript.main, thread, shared)
    return finish_transcript(transcript)


def _agent_id(name: str) -> str:
    parts = name.split("/")
    if len(parts) >= 3 and parts[-3] == "agents":
        return parts[-2]
    return "main"


def _link(main: Thread, thread: Thread, shared: Shared) -> None:
    """A subagent under the Agent call whose result names it (`agent_id: <id>`), else at the
    end of the main thread."""
    named = re.compile(rf"agent_id:\s*{re.escape(thread.title)}\b")
    for turn in main.turns:
        for event in turn.events:
            if event.kind == EventKind.TOOL_RESULT and named.search(str(event.text)):
                spawn_after(thread, main, turn, event, shared.ids)
                return
    if main.turns:
        spawn_after(thread, main, main.turns[-1], None, shared.ids)


class _Reader:
    def __init__(self, transcript: Transcript, thread: Thread, shared: Shared, name: str) -> None:
        self.transcript, self.thread, self.shared, self.name = transcript, thread, shared, name
        self.builder = ThreadBuilder(thread, shared)
        self.step: Turn | None = None  # the model call still streaming, once it has output
        self.step_key = ""
        self.step_stamp: str | None = None
        self.step_open = False  # between a step.begin and its step.end
        self.model: str | None = None
        self.usage_of_step: set[int] = set()  # turns whose usage is a step.end's, not a record's
        self.last_call: Turn | None = None  # the latest model call, which a usage.record counts

    def record(self, record: dict[str, Any], line: int) -> None:
        kind = as_str(record.get("type")) or ""
        stamp = iso_from_epoch(record.get("time"))
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, record, line, stamp)
        elif kind not in KNOWN_TYPES:
            turn = self.builder.current_turn(stamp)
            turn.events.append(unknown_event(self.shared.ids, record, kind or "?", line))

    def close(self) -> None:
        self.step = None

    # -- records ---------------------------------------------------------------------------

    def config(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        disclosure = as_dict(record.get("environmentDisclosure"))
        cwd = as_str(record.get("cwd")) or as_str(disclosure.get("cwd"))
        if cwd and self.transcript.cwd is None:
            self.transcript.cwd = cwd
        self.model = as_str(record.get("modelAlias")) or self.model

    def message(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        message = as_dict(record.get("message"))
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            self.step = None
            origin = message.get("origin")
            origin_kind = as_dict(origin).get("kind") if isinstance(origin, dict) else origin
            self.builder.add_user(
                {"content": _blocks(content)},
                tool_use_result=None,
                timestamp=stamp,
                line=line,
                is_meta=as_str(origin_kind) in _HARNESS_ORIGINS,
            )
        elif role == "assistant":
            self._assistant_message(message, line, stamp)
        elif role == "tool":
            self._result(message.get("toolCallId"), content, message.get("isError"), line, stamp)
        else:
            turn = self.builder.current_turn(stamp)
            self.builder.event(
                turn, EventKind.SYSTEM_NOTICE, line, text=as_text(content), timestamp=stamp
            )

    def _assistant_message(self, message: dict[str, Any], line: int, stamp: str | None) -> None:
        blocks = _blocks(message.get("content"))
        for call in message.get("toolCalls") or []:
            call = as_dict(call)
            function = as_dict(call.get("function"))  # protocol 1.0
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id"),
                    "name": call.get("name") or function.get("name"),
                    "input": json_arguments(call.get("arguments", function.get("arguments"))),
                }
            )
        key = as_str(message.get("id")) or f"message-{self.name}-{line}"
        self.builder.add_assistant(
            {"id": key, "model": self.model, "content": blocks},
            request_id=None,
            timestamp=stamp,
            line=line,
        )
        self.last_call = self.builder.current_turn()
        self.step, self.step_open = None, False

    def loop_event(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        event = as_dict(record.get("event"))
        kind = event.get("type")
        if kind == "step.begin":
            self._begin_step(str(event.get("uuid") or line), stamp)
        elif kind == "content.part":
            self._output(_blocks([event.get("part")]), event, line, stamp)
        elif kind == "tool.call":
            block = {
                "type": "tool_use",
                "id": event.get("toolCallId"),
                "name": event.get("name"),
                "input": event.get("args"),
            }
            self._output([block], event, line, stamp)
        elif kind == "tool.result":
            result = as_dict(event.get("result"))
            self._result(
                event.get("toolCallId"), result.get("output"), result.get("isError"), line, stamp
            )
        elif kind == "step.end":
            self._end_step(event)
        else:
            turn = self.builder.current_turn(stamp)
            raw = {**event, "type": f"loop:{kind}"}
            turn.events.append(unknown_event(self.shared.ids, raw, f"loop:{kind}", line))

    def _begin_step(self, key: str, stamp: str | None) -> None:
        # The step's turn waits for its first output: a step cancelled before any is no turn.
        self.step_key, self.step_stamp, self.step_open = f"{self.name}:{key}", stamp, True
        self.step = None

    def _step_turn(self, stamp: str | None) -> Turn:
        if self.step is None:
            self.builder.add_assistant(
                {"id": self.step_key, "model": self.model, "content": []},
                request_id=None,
                timestamp=self.step_stamp or stamp,
                line=None,
            )
            self.step = self.last_call = self.builder.current_turn()
        return self.step

    def _output(
        self, blocks: list[dict[str, Any]], event: dict[str, Any], line: int, stamp: str | None
    ) -> None:
        step = as_str(event.get("stepUuid"))
        if not self.step_open or (step and f"{self.name}:{step}" != self.step_key):
            self._begin_step(step or str(line), stamp)
        self._step_turn(stamp)
        self.builder.add_assistant(
            {"id": self.step_key, "model": self.model, "content": blocks},
            request_id=None,
            timestamp=stamp,
            line=line,
        )

    def _end_step(self, event: dict[str, Any]) -> None:
        usage = _usage(event.get("usage"))
        if usage is not None and self.step_open:
            turn = self._step_turn(None)
            if turn.usage is None:
                turn.usage = usage
                self.usage_of_step.add(id(turn))
        self.step, self.step_open = None, False

    def _result(
        self, call_id: Any, output: Any, is_error: Any, line: int, stamp: str | None
    ) -> None:
        self.builder.add_tool_result(
            {"tool_use_id": call_id, "content": _blocks(output), "is_error": bool(is_error)},
            None,
            stamp,
            line,
        )

    def usage_record(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        usage = _usage(record.get("usage"))
        if usage is None:
            return
        turn = self.last_call or self.builder.new_turn(timestamp=stamp)
        model = as_str(record.get("model"))
        if model:
            turn.model = model
        if id(turn) in self.usage_of_step or turn.usage is None:
            # The journal's own count replaces the step's copy of it.
            self.usage_of_step.discard(id(turn))
            turn.usage = usage
        else:
            turn.usage.add(usage)

    def compaction(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        summary = record.get("summary")
        if isinstance(summary, dict):  # protocol 1.0: a whole message
            summary = as_text(summary.get("content"))
        text = as_str(summary) or as_str(record.get("contextSummary")) or "context compacted"
        turn = self.builder.new_turn(timestamp=stamp)
        self.builder.event(turn, EventKind.COMPACTION, line, text=text, timestamp=stamp)
        self.step = None

    def context_reset(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        kind = record.get("type")
        text = (
            "The context was cleared."
            if kind == "context.clear"
            else f"The last {record.get('count')} message(s) were undone."
        )
        turn = self.builder.current_turn(stamp)
        self.builder.event(turn, EventKind.SYSTEM_NOTICE, line, text=text, timestamp=stamp)

    def turn_cancelled(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        reason = as_str(record.get("reason"))
        text = "The turn was cancelled" + (f" ({reason.replace('_', ' ')})." if reason else ".")
        turn = self.builder.current_turn(stamp)
        self.builder.event(turn, EventKind.SYSTEM_NOTICE, line, text=text, timestamp=stamp)
        self.step, self.step_open = None, False

    def llm_request(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        # The provider's model name, where the settings name an alias.
        self.model = as_str(record.get("model")) or self.model

    def turn_ended(self, record: dict[str, Any], line: int, stamp: str | None) -> None:
        error = as_dict(record.get("error"))
        if not error and record.get("reason") not in ("failed", "blocked"):
            return
        text = as_str(error.get("message")) or f"The turn ended: {record.get('reason')}."
        turn = self.builder.current_turn(stamp)
        self.builder.event(
            turn, EventKind.SYSTEM_NOTICE, line, text=text, timestamp=stamp, is_error=True
        )
        self.transcript.is_error = True


_HANDLERS = {
    "config.update": _Reader.config,
    "context.append_message": _Reader.message,
    "context.append_loop_event": _Reader.loop_event,
    "usage.record": _Reader.usage_record,
    "context.apply_compaction": _Reader.compaction,
    "context.clear": _Reader.context_reset,
    "context.undo": _Reader.context_reset,
    "turn.ended": _Reader.turn_ended,
    "turn.cancel": _Reader.turn_cancelled,
    "llm.request": _Reader.llm_request,
    "profile.bind": _Reader.config,
}


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Kimi content parts as Anthropic blocks (text, thinking, image)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        part = as_dict(part)
        kind = part.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": as_str(part.get("text")) or ""})
        elif kind == "think":
            blocks.append({"type": "thinking", "thinking": as_str(part.get("think")) or ""})
        elif part:
            blocks.append(part)
    return blocks


def _usage(raw: Any) -> Usage | None:
    usage = as_dict(raw)
    if not usage:
        return None
    return Usage(
        input_tokens=_count(usage.get("inputOther")),
        output_tokens=_count(usage.get("output")),
        cache_read_tokens=_count(usage.get("inputCacheRead")),
        cache_write_tokens=_count(usage.get("inputCacheCreation")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


FORMAT_SPEC = LogFormat(
    FORMAT,
    "Kimi Code CLI",
    parse,
    "kimi-cli",
    records=((15, looks_like),),
)
