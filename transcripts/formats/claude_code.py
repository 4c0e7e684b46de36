"""Claude Code session files (~/.claude/projects/<project>/<session>.jsonl) and their subagents.

Three layouts of subagents are read:
- 1.0.x: subagent lines inline in the session file, marked `isSidechain`, linked to the Task call
  whose prompt equals the sidechain's first user message;
- 2.0.x: `agent-<id>.jsonl` files beside the session file;
- 2.1.x: `<session>/subagents/agent-<id>.jsonl` with `agent-<id>.meta.json`.
In 2.x a subagent is linked to the Task/Agent call whose result names it (toolUseResult.agentId).
The "Warmup" agents Claude Code starts on its own are dropped.

The conversation is a tree through parentUuid. A rewind leaves an abandoned branch behind; we
follow the branch that leads to the last message. A resumed session repeats earlier lines
with the same uuid; the first copy is kept. A compact_boundary marker starts a new root whose
logicalParentUuid continues the tree.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any

from .anthropic_messages import Shared, ThreadBuilder, link_subagents, spawn
from .finish import finish_transcript
from .records import (
    RECORD_ERRORS,
    SourceFile,
    as_dict,
    as_text,
    iter_jsonl,
    record_not_understood,
    unknown_event,
)
from .schema import EventKind, MalformedLine, Thread, Transcript

FORMAT = "claude-code-jsonl"

# Record types that carry nothing to show (titles, file snapshots, queue bookkeeping, hook and
# subagent progress that the subagent files repeat in full).
_SILENT_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "custom-title",
        "tag",
        "pr-link",
        "agent-name",
        "last-prompt",
        "ai-title",
    }
)
_SILENT_SYSTEM = frozenset({"turn_duration", "stop_hook_summary"})
_CONSUMED: dict[str, Any] = {}


@dataclass(slots=True)
class Record:
    source: str
    line: int
    data: dict[str, Any]

    @property
    def uuid(self) -> str | None:
        value = self.data.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def parent(self) -> str | None:
        value = self.data.get("parentUuid") or self.data.get("logicalParentUuid")
        return value if isinstance(value, str) else None


def is_agent_file(name: str) -> bool:
    base = posixpath.basename(name)
    return base.startswith("agent-") and base.endswith(".jsonl")


def agent_id_of(name: str) -> str:
    return posixpath.basename(name)[len("agent-") : -len(".jsonl")]


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    shared = Shared()
    # Anything under subagents/ (agent files, workflow journals) is never the main conversation.
    main_files = [
        f
        for f in files
        if f.name.endswith(".jsonl")
        and not is_agent_file(f.name)
        and "/subagents/" not in f"/{f.name}"
    ]
    agent_files = [f for f in files if is_agent_file(f.name)]
    metas = _agent_metas(files)

    records = _read(main_files, transcript.malformed)
    main_records = [r for r in records if not r.data.get("isSidechain")]
    sidechain_records = [r for r in records if r.data.get("isSidechain")]
    _describe(transcript, main_records or records)
    if main_records:
        shared.files.cwd = transcript.cwd

    session_ids = {_str(r.data.get("sessionId")) for r in records} - {None}
    main = Thread(id="main", kind="main")
    transcript.threads.append(main)
    _build(main, _active_branch(main_records, transcript), shared, transcript.malformed)
    threads: dict[str, Thread] = {"main": main}
    thread_for_agent: dict[str, str] = {}
    for source in sorted(agent_files, key=lambda f: f.name):
        agent_id = agent_id_of(source.name)
        if agent_id.startswith("acompact"):
            continue  # context compression runs as an internal agent; not the user's subagent
        agent_records = _read([source], transcript.malformed)
        if _is_warmup(agent_records) or not _belongs(agent_records, session_ids):
            continue
        thread = _subagent_thread(agent_id, agent_records, metas.get(agent_id), shared, transcript)
        threads[thread.id] = thread
        thread_for_agent[agent_id] = thread.id
    link_subagents(threads, shared, thread_for_agent)
    _inline_sidechains(sidechain_records, threads, shared, transcript)

    for thread in threads.values():
        if thread.kind == "subagent":
            transcript.threads.append(thread)
            if thread.parent_event is None:
                thread.parent_thread = "main"
                transcript.notes.append(f"Subagent {thread.id} could not be linked to its call.")
    if shared.call_costs_usd:
        # The log's own cost, one figure per model call however many lines repeated it.
        transcript.cost_usd = round(sum(shared.call_costs_usd.values()), 6)
    return finish_transcript(transcript)


def _read(files: list[SourceFile], malformed: list[MalformedLine]) -> list[Record]:
    """Records of all files in time order, each uuid once (a resumed session repeats lines)."""
    seen: set[str] = set()
    out: list[Record] = []
    for source in sorted(files, key=_first_timestamp):
        for number, data in iter_jsonl(source, malformed):
            uuid = data.get("uuid")
            if isinstance(uuid, str):
                if uuid in seen:
                    continue
                seen.add(uuid)
            out.append(Record(source.name, number, data))
    return out


def _first_timestamp(source: SourceFile) -> str:
    for line in source.data[:65536].split(b"\n"):
        try:
            stamp = json.loads(line).get("timestamp")
        except (ValueError, AttributeError):
            continue
        if isinstance(stamp, str):
            return stamp
    return ""


def _agent_metas(files: list[SourceFile]) -> dict[str, dict[str, Any]]:
    metas: dict[str, dict[str, Any]] = {}
    for source in files:
        base = posixpath.basename(source.name)
        if base.startswith("agent-") and base.endswith(".meta.json"):
            try:
                value = json.loads(source.data)
            except ValueError:
                continue
            if isinstance(value, dict):
                metas[base[len("agent-") : -len(".meta.json")]] = value
    return metas


def _describe(transcript: Transcript, records: list[Record]) -> None:
    for record in records:
        data = record.data
        transcript.session_id = transcript.session_id or _str(data.get("sessionId"))
        transcript.cwd = transcript.cwd or _str(data.get("cwd"))
        transcript.git_branch = transcript.git_branch or _str(data.get("gitBranch")) or None
        transcript.cli_version = transcript.cli_version or _str(data.get("version"))
        if transcript.session_id and transcript.cwd and transcript.cli_version:
            break


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _active_branch(records: list[Record], transcript: Transcript) -> list[Record]:
    """The records on the branch that leads to the last message, plus parallel tool results.

    A branch hanging off that path is abandoned (a rewind or a retried response) when it starts
    with a user prompt or a model response. Other side branches are kept: some versions parent
    parallel tool results on the call's message, and notices and progress records hang off the
    message they are about.
    """
    by_uuid = {r.uuid: r for r in records if r.uuid}
    leaf = next((r for r in reversed(records) if r.uuid and _is_message(r)), None)
    if leaf is None:
        return records
    on_path: set[str] = set()
    cursor: Record | None = leaf
    while cursor is not None and cursor.uuid and cursor.uuid not in on_path:
        on_path.add(cursor.uuid)
        cursor = by_uuid.get(cursor.parent) if cursor.parent else None
    kept: list[Record] = []
    branch_kept: dict[str, bool] = {}
    dropped = 0
    for record in records:
        uuid = record.uuid
        if uuid is None or uuid in on_path:
            kept.append(record)
            continue
        parent = record.parent
        if parent in on_path:
            keep = not _is_message(record) or _is_tool_result(record)
        elif parent is not None and parent in branch_kept:
            keep = branch_kept[parent]
        else:
            keep = True  # a separate root: not a branch of the path, nothing to choose between
        branch_kept[uuid] = keep
        if keep:
            kept.append(record)
        elif _is_message(record):
            dropped += 1
    if dropped:
        transcript.notes.append(
            f"{dropped} messages on abandoned branches (rewound or retried) are not shown."
        )
    return kept


def _is_message(record: Record) -> bool:
    return record.data.get("type") in ("user", "assistant")


def _is_tool_result(record: Record) -> bool:
    content = as_dict(record.data.get("message")).get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _build(
    thread: Thread, records: list[Record], shared: Shared, malformed: list[MalformedLine]
) -> None:
    builder = ThreadBuilder(thread, shared)
    for record in records:
        try:
            add_record(builder, record.data, record.line)
        except RECORD_ERRORS as exc:
            record_not_understood(malformed, record.source, record.line, exc)
        # The events keep what they need; the rest of the record goes now, not with the log.
        record.data = _CONSUMED


def add_record(builder: ThreadBuilder, data: dict[str, Any], line: int) -> None:
    kind = data.get("type")
    timestamp = _str(data.get("timestamp"))
    message = data.get("message")
    if kind == "assistant" and isinstance(message, dict):
        cost = data.get("costUSD")
        if isinstance(cost, (int, float)):
            key = (str(message.get("id")), str(data.get("requestId")))
            builder.shared.call_costs_usd[key] = float(cost)
        builder.add_assistant(
            message,
            request_id=_str(data.get("requestId")),
            timestamp=timestamp,
            line=line,
            is_error=bool(data.get("isApiErrorMessage")),
        )
    elif kind == "user" and isinstance(message, dict):
        if data.get("isCompactSummary"):
            _compaction(builder, as_summary(message), timestamp, line, summary=True)
            return
        builder.add_user(
            message,
            tool_use_result=data.get("toolUseResult"),
            timestamp=timestamp,
            line=line,
            is_meta=bool(data.get("isMeta")),
        )
    elif kind == "system":
        _system(builder, data, timestamp, line)
    elif kind not in _SILENT_TYPES:
        builder.current_turn(timestamp).events.append(
            unknown_event(builder.shared.ids, data, str(kind), line)
        )


def as_summary(message: dict[str, Any]) -> str:
    return as_text(message.get("content"))


def _system(builder: ThreadBuilder, data: dict[str, Any], timestamp: str | None, line: int) -> None:
    subtype = data.get("subtype")
    if subtype == "compact_boundary":
        meta = data.get("compactMetadata") or data.get("compact_metadata") or {}
        trigger = meta.get("trigger") if isinstance(meta, dict) else None
        before = meta.get("preTokens") or meta.get("pre_tokens") if isinstance(meta, dict) else None
        text = "Conversation compacted"
        if trigger:
            text += f" ({trigger}"
            text += f", {before} tokens before)" if before else ")"
        _compaction(builder, text, timestamp, line, summary=False)
        return
    if subtype in _SILENT_SYSTEM:
        return
    content = data.get("content")
    text = content if isinstance(content, str) and content else ""
    if not text:
        text = json.dumps({k: v for k, v in data.items() if k in ("subtype", "error", "level")})
    is_error = data.get("level") == "error" or subtype == "api_error"
    turn = builder.current_turn(timestamp)
    builder.event(
        turn, EventKind.SYSTEM_NOTICE, line, text=text, is_error=is_error, timestamp=timestamp
    )


def _compaction(
    builder: ThreadBuilder, text: str, timestamp: str | None, line: int, *, summary: bool
) -> None:
    turn = builder.thread.turns[-1] if builder.thread.turns else None
    last = turn.events[-1] if turn and turn.events else None
    if summary and last is not None and last.kind == EventKind.COMPACTION:
        last.text = f"{last.text}\n\n{text}" if last.text else text
        return
    turn = builder.new_turn(timestamp=timestamp)
    builder.event(turn, EventKind.COMPACTION, line, text=text, timestamp=timestamp)


def _is_warmup(records: list[Record]) -> bool:
    for record in records:
        if record.data.get("type") == "user":
            content = as_dict(record.data.get("message")).get("content")
            text = content if isinstance(content, str) else None
            if isinstance(content, list) and content and isinstance(content[0], dict):
                text = content[0].get("text")
            return isinstance(text, str) and text.strip() == "Warmup"
    return False


def _belongs(records: list[Record], session_ids: set[Any]) -> bool:
    """2.0.x keeps every session's agent files in one folder: keep only this session's."""
    ids = {_str(r.data.get("sessionId")) for r in records[:5]} - {None}
    return not ids or not session_ids or bool(ids & session_ids)


def _subagent_thread(
    agent_id: str,
    records: list[Record],
    meta: dict[str, Any] | None,
    shared: Shared,
    transcript: Transcript,
) -> Thread:
    title = ""
    if meta:
        title = str(
            meta.get("description") or meta.get("agentType") or meta.get("subagent_type") or ""
        )
    thread = Thread(id=f"agent-{agent_id}", kind="subagent", title=title)
    _build(thread, _active_branch(records, transcript), shared, transcript.malformed)
    return thread


def _inline_sidechains(
    records: list[Record], threads: dict[str, Thread], shared: Shared, transcript: Transcript
) -> None:
    """1.0.x: sidechain conversations inline, each linked to the Task call that had its prompt."""
    groups: dict[str, list[Record]] = {}
    root_of: dict[str, str] = {}
    for record in records:
        uuid = record.uuid or f"line-{record.line}"
        parent = record.parent
        root = root_of.get(parent, uuid) if parent else uuid
        root_of[uuid] = root
        groups.setdefault(root, []).append(record)
    prompts = {
        json.dumps(site.event.arguments.get("prompt")): call_id
        for call_id, site in shared.calls.items()
        if site.event.tool_name in ("Task", "Agent") and isinstance(site.event.arguments, dict)
    }
    for number, group in enumerate(groups.values(), start=1):
        if _is_warmup(group):
            continue
        thread = Thread(id=f"sidechain-{number}", kind="subagent")
        prompt = json.dumps(_first_user_text(group))
        _build(thread, group, shared, transcript.malformed)
        threads[thread.id] = thread
        call_id = prompts.pop(prompt, None)
        if call_id is not None:
            spawn(thread, shared.calls[call_id], shared)


def _first_user_text(records: list[Record]) -> str | None:
    for record in records:
        if record.data.get("type") == "user":
            content = as_dict(record.data.get("message")).get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "\n".join(
                    str(b.get("text"))
                    for b in content
                    if isinstance(b, dict) and b.get("type") == "text"
                )
    return None
