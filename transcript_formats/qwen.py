"""Qwen Code sessions: `~/.qwen/projects/<project>/chats/<session id>.jsonl` (the JSONL store
that replaced JSON sessions at the end of 2025; Qwen Code is a fork of Gemini CLI).

Each line is a record `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version,
gitBranch, message?, model?, usageMetadata?, toolCallResult?, systemPayload?, agentId?,
isSidechain?}`. `message` is a Gemini content `{role, parts}`: a `user` record holds the prompt,
an `assistant` record one model response (text, `thought` parts, `functionCall` parts) with
that call's `usageMetadata`, a `tool_result` record the `functionResponse` parts sent back and
`toolCallResult {callId, status, resultDisplay, error}` (an edit's display carries the diff).
`system` records mark compressions, slash commands, @-file reads, rewinds and a good deal of
bookkeeping (telemetry, titles, snapshots) that is not shown; a user record with a `subtype`
(a notification, a cron prompt) is a notice, not a prompt.

Records are shown in the order written: after a rewind the file holds both the abandoned turns
and the new ones (the `system/rewind` record marks where), and all of their tokens were spent.
Records a subagent wrote (`isSidechain`, `agentId`) form the subagent's thread.
"""

from __future__ import annotations

import json
from typing import Any

from .finish import finish_transcript
from .genai_parts import (
    Response,
    calls_of,
    file_diff,
    responses_of,
    str_or_none,
    thought_texts,
    usage_of,
    visible_text,
)
from .records import (
    EventIds,
    SourceFile,
    as_dict,
    capped_raw,
    each_jsonl_record,
    images_of,
)
from .schema import Event, EventKind, Thread, Transcript, Turn
from .spawns import spawn_after

FORMAT = "qwen-code-jsonl"

# System records that keep the CLI's own state and say nothing about the conversation.
_BOOKKEEPING = frozenset(
    {
        "ui_telemetry",  # repeats each API response's token counts: never counted twice
        "attribution_snapshot",
        "custom_title",
        "file_history_snapshot",
        "session_notes",
        "session_source",
        "session_sources_snapshot",
        "session_model",
        "session_approval_mode",
        "session_execution_engine",
        "session_artifact_event",
        "session_artifact_snapshot",
        "parent_session",
        "user_text_elements",
        "branch_checkpoint",
        "goal_state",
        "goal_runtime",
        "goal_turn_end",
        "turn_result",
        "agent_bootstrap",
        "agent_launch_prompt",
        "agent_retry",
        "agent_session_ready",
        "omni_recall",
        "managed_session_header_v1",
        "managed_session_event_v1",
        "managed_session_commit_v1",
    }
)
_SPAWNING_TOOLS = frozenset({"task", "agent"})


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    reader = _Reader(transcript)
    each_jsonl_record(files, transcript.malformed, reader.record)
    reader.link_subagents()
    return finish_transcript(transcript)


class _Reader:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.ids = EventIds()
        self.main = Thread(id="main", kind="main")
        transcript.threads.append(self.main)
        self.agents: dict[str, Thread] = {}
        self.calls: dict[str, tuple[Thread, Turn, Event]] = {}
        self.last_call: dict[str, Turn] = {}  # thread id -> turn of its latest model call

    # -- records -----------------------------------------------------------------------------

    def record(self, record: dict[str, Any], line: int) -> None:
        self._describe(record)
        thread = self._thread_of(record)
        kind, subtype = record.get("type"), record.get("subtype")
        stamp = str_or_none(record.get("timestamp"))
        message = as_dict(record.get("message"))
        if kind == "user" and not subtype:
            self._prompt(thread, message, stamp, line)
        elif kind == "user":
            self._user_notice(thread, record, message, stamp, line)
        elif kind == "assistant":
            self._assistant(thread, record, message, stamp, line)
        elif kind == "tool_result":
            self._tool_result(thread, record, message, stamp, line)
        elif kind == "system":
            self._system(thread, record, stamp, line)
        else:
            turn = self._turn(thread, stamp)
            self._event(turn, EventKind.UNKNOWN, line, raw_type=str(kind), raw=capped_raw(record))

    def _describe(self, record: dict[str, Any]) -> None:
        transcript = self.transcript
        if record.get("isSidechain") or record.get("agentId"):
            return
        transcript.session_id = transcript.session_id or str_or_none(record.get("sessionId"))
        transcript.cwd = transcript.cwd or str_or_none(record.get("cwd"))
        transcript.cli_version = str_or_none(record.get("version")) or transcript.cli_version
        transcript.git_branch = str_or_none(record.get("gitBranch")) or transcript.git_branch

    def _thread_of(self, record: dict[str, Any]) -> Thread:
        agent = str_or_none(record.get("agentId"))
        if agent is None:
            return self.main
        thread = self.agents.get(agent)
        if thread is None:
            title = str_or_none(record.get("agentName")) or agent
            thread = Thread(id=f"agent-{agent}", kind="subagent", title=title)
            self.agents[agent] = thread
            self.transcript.threads.append(thread)
        return thread

    def _turn(self, thread: Thread, stamp: str | None, model: str | None = None) -> Turn:
        turn = Turn(index=len(thread.turns), timestamp=stamp, model=model)
        thread.turns.append(turn)
        return turn

    def _event(self, turn: Turn, kind: EventKind, line: int, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, timestamp=turn.timestamp, **fields)
        turn.events.append(event)
        return event

    def _prompt(
        self, thread: Thread, message: dict[str, Any], stamp: str | None, line: int
    ) -> None:
        parts = message.get("parts")
        turn = self._turn(thread, stamp)
        self._event(
            turn,
            EventKind.USER_TEXT,
            line,
            text=visible_text(parts),
            images=images_of(parts if isinstance(parts, list) else []),
        )

    def _user_notice(
        self,
        thread: Thread,
        record: dict[str, Any],
        message: dict[str, Any],
        stamp: str | None,
        line: int,
    ) -> None:
        payload = as_dict(record.get("systemPayload"))
        shown = payload.get("displayText")
        text = shown if isinstance(shown, str) and shown else visible_text(message.get("parts"))
        subtype = str(record.get("subtype") or "")
        if subtype == "mid_turn_user_message":
            turn = self._turn(thread, stamp)
            self._event(turn, EventKind.USER_TEXT, line, text=text)
            return
        turn = self._turn(thread, stamp)
        self._event(turn, EventKind.SYSTEM_NOTICE, line, text=f"[{subtype}] {text}".strip())

    def _assistant(
        self,
        thread: Thread,
        record: dict[str, Any],
        message: dict[str, Any],
        stamp: str | None,
        line: int,
    ) -> None:
        turn = self._turn(thread, stamp, str_or_none(record.get("model")))
        parts = message.get("parts")
        for text in thought_texts(parts):
            self._event(turn, EventKind.REASONING, line, text=text)
        text = visible_text(parts)
        if text.strip():
            self._event(turn, EventKind.ASSISTANT_TEXT, line, text=text)
        for call in calls_of(parts):
            event = self._event(
                turn,
                EventKind.TOOL_CALL,
                line,
                tool_name=call.name,
                call_id=call.call_id,
                arguments=call.args,
            )
            if call.call_id:
                self.calls[call.call_id] = (thread, turn, event)
        usage = record.get("usageMetadata")
        if isinstance(usage, dict):
            turn.usage = usage_of(
                prompt=usage.get("promptTokenCount"),
                candidates=usage.get("candidatesTokenCount"),
                cached=usage.get("cachedContentTokenCount"),
                thoughts=usage.get("thoughtsTokenCount"),
                tool=usage.get("toolUsePromptTokenCount"),
                total=usage.get("totalTokenCount"),
                thoughts_in_candidates=True,
            )
        if not turn.events:
            self._event(turn, EventKind.SYSTEM_NOTICE, line, text="The model returned no text.")
        self.last_call[thread.id] = turn

    def _tool_result(
        self,
        thread: Thread,
        record: dict[str, Any],
        message: dict[str, Any],
        stamp: str | None,
        line: int,
    ) -> None:
        info = as_dict(record.get("toolCallResult"))
        display = info.get("resultDisplay")
        failed = info.get("status") in ("error", "cancelled") or bool(info.get("error"))
        responses = responses_of(message.get("parts"))
        if not responses:
            responses = [_response_from_info(info)]
        for response in responses:
            site = self.calls.get(response.call_id or "")
            turn = site[1] if site else self.last_call.get(thread.id) or self._turn(thread, stamp)
            name = response.name or (site[2].tool_name if site else None)
            is_error = failed or response.is_error
            shown = display if isinstance(display, str) and display.strip() else response.text
            self._event(
                turn,
                EventKind.TOOL_RESULT,
                line,
                tool_name=name,
                call_id=response.call_id,
                text=shown or _error_text(info),
                is_error=is_error,
            )
            change = None if is_error else file_diff(display)
            if change is not None:
                self._event(
                    turn,
                    EventKind.FILE_CHANGE,
                    line,
                    tool_name=name,
                    call_id=response.call_id,
                    path=change.path,
                    diff=change.diff,
                )

    def _system(self, thread: Thread, record: dict[str, Any], stamp: str | None, line: int) -> None:
        subtype = str(record.get("subtype") or "")
        payload = as_dict(record.get("systemPayload"))
        if subtype in _BOOKKEEPING:
            return
        if subtype == "chat_compression":
            turn = self._turn(thread, stamp)
            self._event(turn, EventKind.COMPACTION, line, text=_compression_text(payload))
        elif subtype in ("slash_command", "at_command", "rewind", "notification", "cron"):
            text = _system_text(subtype, payload)
            if text:
                turn = self._turn(thread, stamp)
                self._event(turn, EventKind.SYSTEM_NOTICE, line, text=text)
        else:
            turn = self._turn(thread, stamp)
            self._event(
                turn, EventKind.UNKNOWN, line, raw_type=f"system/{subtype}", raw=capped_raw(record)
            )

    # -- subagents ---------------------------------------------------------------------------

    def link_subagents(self) -> None:
        """Hang each subagent under the task call whose prompt opened it, else the first such
        call not yet taken, else at the end of the main thread."""
        spawners = [
            site
            for site in self.calls.values()
            if site[0] is self.main and (site[2].tool_name or "").lower() in _SPAWNING_TOOLS
        ]
        for thread in self.agents.values():
            site = _by_prompt(spawners, _first_prompt(thread)) or (
                spawners[0] if spawners else None
            )
            if site is not None:
                spawners.remove(site)
                spawn_after(thread, self.main, site[1], site[2], self.ids)
            else:
                turn = self._turn(self.main, thread.turns[0].timestamp if thread.turns else None)
                spawn_after(thread, self.main, turn, None, self.ids)


def _first_prompt(thread: Thread) -> str:
    for turn in thread.turns:
        for event in turn.events:
            if event.kind == EventKind.USER_TEXT:
                return event.text.strip()
    return ""


def _by_prompt(
    spawners: list[tuple[Thread, Turn, Event]], prompt: str
) -> tuple[Thread, Turn, Event] | None:
    for site in spawners:
        args = site[2].arguments
        if prompt and isinstance(args, dict) and str(args.get("prompt") or "").strip() == prompt:
            return site
    return None


def _response_from_info(info: dict[str, Any]) -> Response:
    return Response(str_or_none(info.get("callId")), None, "", bool(info.get("error")))


def _error_text(info: dict[str, Any]) -> str:
    error = info.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or json.dumps(error, default=str))
    return str(error) if error else ""


def _compression_text(payload: dict[str, Any]) -> str:
    info = as_dict(payload.get("info"))
    before, after = info.get("originalTokenCount"), info.get("newTokenCount")
    head = f"History compressed: {before} → {after} tokens." if before or after else ""
    history = payload.get("compressedHistory")
    summary = ""
    if isinstance(history, list) and history:
        summary = visible_text(as_dict(history[0]).get("parts"))
    return "\n\n".join(part for part in (head, summary) if part) or "History compressed."


def _system_text(subtype: str, payload: dict[str, Any]) -> str:
    if subtype == "slash_command":
        if payload.get("phase") == "result":
            return ""
        return str(payload.get("rawCommand") or "/?")
    if subtype == "at_command":
        files = payload.get("filesRead")
        read = ", ".join(str(f) for f in files) if isinstance(files, list) else ""
        return f"{payload.get('userText') or '@'} (read {read or 'nothing'})"
    if subtype == "rewind":
        return (
            f"Rewound: the last {payload.get('truncatedCount', '?')} items were taken back; "
            "the turns above stay shown and their tokens are counted."
        )
    return str(payload.get("displayText") or "")
