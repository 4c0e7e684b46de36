"""Claude Code session files (~/.claude/projects/<project>/<session>.jsonl) and their subagents.

Four layouts of subagents are read:
- 1.0.x: subagent lines inline in the session file, marked `isSidechain`, linked to the Task call
  whose prompt equals the sidechain's first user message;
- 2.0.x: `agent-<id>.jsonl` files beside the session file;
- 2.1.x: `<session>/subagents/agent-<id>.jsonl` with `agent-<id>.meta.json`;
- 2.1.x workflows: `<session>/subagents/workflows/<run>/agent-<id>.jsonl`, the agents a
  `Workflow` call started (its result names the run: toolUseResult.runId).
In 2.x a subagent is linked to the Task/Agent call whose result names it (toolUseResult.agentId),
else to the call its meta file names (toolUseId). The "Warmup" agents Claude Code starts on its
own are dropped. A subagent the session names but whose file is missing is noted.

The conversation is a tree through parentUuid (claude_code_tree): the path the session ended on
is the thread; each branch a rewind or a retried response left behind becomes a thread of kind
"branch", folded under a notice where it branches off, its tokens counted in the totals. A
resumed session repeats earlier lines with the same uuid; the first copy is kept. A
compact_boundary marker starts a new root whose logicalParentUuid continues the tree.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from .anthropic_messages import Shared, ThreadBuilder, link_subagents, spawn
from .claude_code_notices import (
    SESSION_RECORDS,
    attachment_notice,
    queued_prompt,
    session_notice,
    setting_value,
)
from .claude_code_tree import Branch, Record, drop_replays, split_branches
from .finish import finish_transcript
from .lone_subagent import lone_subagent_title
from .records import (
    RECORD_ERRORS,
    SourceFile,
    as_dict,
    as_text,
    iter_jsonl_spans,
    record_not_understood,
    unknown_event,
)
from .schema import Event, EventKind, MalformedLine, Thread, Transcript

FORMAT = "claude-code-jsonl"

# Record types that carry nothing to show (titles, file snapshots, queue bookkeeping, hook and
# subagent progress that the subagent files repeat in full).
_SILENT_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "file-history-delta",
        "attribution-snapshot",
        "marble-origami-snapshot",
        "queue-operation",
        "progress",
        "custom-title",
        "tag",
        "agent-name",
        "agent-color",
        "last-prompt",
        "ai-title",
        # Claude Code 2.1.3xx records each API request it sent (its shape, its blobs), the
        # tools a turn used and a latch: the conversation itself is in the other records.
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "tools-used",
        "atis-latch",
    }
)
_SILENT_SYSTEM = frozenset({"turn_duration", "stop_hook_summary"})
_WORKFLOW_DIR = re.compile(r"subagents/workflows/([A-Za-z0-9_.-]+)")


@dataclass
class _Pending:
    """An abandoned branch, built once every path is (its notice is placed while building)."""

    parent: Thread
    branch: Branch
    marker: Event | None = None


@dataclass
class _Session:
    transcript: Transcript
    shared: Shared = field(default_factory=Shared)
    owners: dict[str, str] = field(default_factory=dict)  # message id -> thread counting it
    pending: list[_Pending] = field(default_factory=list)
    workflow_calls: dict[str, str] = field(default_factory=dict)  # run id -> Workflow call id


def is_agent_file(name: str) -> bool:
    base = posixpath.basename(name)
    return base.startswith("agent-") and base.endswith(".jsonl")


def agent_id_of(name: str) -> str:
    return posixpath.basename(name)[len("agent-") : -len(".jsonl")]


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    session = _Session(transcript)
    main_files, agent_files, alone = _layout(files)
    records = _read(main_files, transcript.malformed)
    if not agent_files and _only_sidechain_messages(records):
        alone = True  # a subagent's file given alone, whatever its name
    lone_title = lone_subagent_title(transcript, main_files) if alone else ""
    main_records = [r for r in records if alone or not r.sidechain]
    sidechain_records = [r for r in records if not alone and r.sidechain]
    _describe(transcript, main_records or records)
    if main_records:
        session.shared.files.cwd = transcript.cwd

    session_ids = {s for s in map(_session_of, records) if s is not None}
    uuids = {r.uuid for r in records if r.uuid is not None}
    del records  # each list below lets its records go as they are built
    main = Thread(id="main", kind="main", title=lone_title)
    transcript.threads.append(main)
    _build_conversation(main, main_records, session)
    agents = _Agents(threads={"main": main}, metas=_agent_metas(files))
    agents.read(agent_files, session_ids, uuids, session)
    branches = _build_branches(session)
    agents.link(session)
    _inline_sidechains(sidechain_records, agents.threads, session)

    for thread in agents.threads.values():
        if thread.kind == "subagent":
            transcript.threads.append(thread)
            if thread.parent_event is None:
                thread.parent_thread = "main"
                transcript.notes.append(f"Subagent {thread.id} could not be linked to its call.")
    for thread, _ in branches:
        agents.threads.get(thread.parent_thread or "", main).branches.append(thread)
    _note_branches(transcript, branches)
    _note_missing_subagents(session, files, agent_files)
    if session.shared.call_costs_usd:
        # The log's own cost, one figure per model call however many lines repeated it.
        transcript.cost_usd = round(sum(session.shared.call_costs_usd.values()), 6)
    return finish_transcript(transcript)


def _layout(files: list[SourceFile]) -> tuple[list[SourceFile], list[SourceFile], bool]:
    """(session files, subagent files, whether a subagent's file was given alone)."""
    # Anything under subagents/ (agent files, workflow journals) is never the main conversation.
    main_files = [
        f
        for f in files
        if f.name.endswith(".jsonl")
        and not is_agent_file(f.name)
        and "/subagents/" not in f"/{f.name}"
    ]
    agent_files = [f for f in files if is_agent_file(f.name)]
    if not main_files:
        return agent_files, [], True  # read as a conversation of its own
    return main_files, agent_files, False


def _only_sidechain_messages(records: list[Record]) -> bool:
    """Every message a sidechain's: one subagent's conversation (its file may hold a
    bookkeeping record or two that are not)."""
    messages = [r for r in records if r.kind in ("user", "assistant")]
    return bool(messages) and all(r.sidechain for r in messages)


def _read(files: list[SourceFile], malformed: list[MalformedLine]) -> list[Record]:
    """Records of all files in time order, each uuid once (a resumed session repeats lines)."""
    seen: set[str] = set()
    out: list[Record] = []
    for source in sorted(files, key=_first_timestamp):
        for number, span, data in iter_jsonl_spans(source, malformed):
            record = Record.of(source.name, number, data, source, span)
            if record.uuid is not None:
                if record.uuid in seen:
                    continue
                seen.add(record.uuid)
            out.append(record)
    return out


def _first_timestamp(source: SourceFile) -> str:
    for line in source.head(65536).split(b"\n"):
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
        transcript.session_id = transcript.session_id or record.session_id
        transcript.cwd = transcript.cwd or record.cwd
        transcript.git_branch = transcript.git_branch or record.git_branch or None
        transcript.cli_version = transcript.cli_version or record.version
        if transcript.session_id and transcript.cwd and transcript.cli_version:
            break


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _session_of(record: Record) -> str | None:
    # Workflow agents write "<session>#agent-<id>".
    session_id = record.session_id
    return session_id.split("#", 1)[0] if session_id else None


# -- building threads ----------------------------------------------------------------------


def _build_conversation(thread: Thread, records: list[Record], session: _Session) -> None:
    """The path the conversation ended on; its abandoned branches wait in `session.pending`.
    Empties `records` (see _build)."""
    kept = drop_replays(records)
    records.clear()
    split = split_branches(kept)
    del kept
    markers: dict[int, list[_Pending]] = {}
    for branch in split.branches:
        pending = _Pending(thread, branch)
        session.pending.append(pending)
        markers.setdefault(branch.show_before, []).append(pending)
    _build(thread, split.path, session, markers)


def _build(
    thread: Thread,
    records: list[Record],
    session: _Session,
    markers: dict[int, list[_Pending]] | None = None,
) -> None:
    """Build `records` into `thread`, emptying the list as it goes: the records of a long
    session are let go as their events are made, not all held until the end."""
    builder = ThreadBuilder(thread, session.shared)
    malformed = session.transcript.malformed
    markers = markers or {}
    settings: dict[str, str] = {}
    count = len(records)
    records.reverse()
    for at in range(count):
        record = records.pop()
        for pending in markers.get(at, ()):
            pending.marker = _branch_marker(builder, pending.branch)
        # Decoded again here, and let go once built: the events keep what they need of it.
        data = record.full()
        try:
            if not _repeats_setting(data, settings):
                data = _claim_usage(data, thread, session)
                add_record(builder, data, record.line)
                _note_workflow(data, session)
        except RECORD_ERRORS as exc:
            record_not_understood(malformed, record.source, record.line, exc)
    for at in sorted(k for k in markers if k >= count):
        for pending in markers[at]:
            pending.marker = _branch_marker(builder, pending.branch)


def _repeats_setting(data: dict[str, Any], settings: dict[str, str]) -> bool:
    """A session record (permission mode, ...) is shown where it changes, not each time."""
    kind = data.get("type")
    if kind not in SESSION_RECORDS:
        return False
    value = setting_value(data)
    if settings.get(str(kind)) == value:
        return True
    settings[str(kind)] = value
    return False


def _claim_usage(data: dict[str, Any], thread: Thread, session: _Session) -> dict[str, Any]:
    """A model call's tokens count on one thread only, whichever files repeat its lines: the
    record as built here (without its usage where another thread counted it)."""
    message = data.get("message")
    if data.get("type") != "assistant" or not isinstance(message, dict):
        return data
    message_id = message.get("id")
    if not isinstance(message_id, str) or message.get("usage") is None:
        return data
    if session.owners.setdefault(message_id, thread.id) != thread.id:
        return {**data, "message": {**message, "usage": None}}
    return data


def _note_workflow(data: dict[str, Any], session: _Session) -> None:
    """Remember which Workflow call started which run (its agents' folder is named by it)."""
    blocks = as_dict(data.get("message")).get("content")
    if data.get("type") != "user" or not isinstance(blocks, list):
        return
    calls = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if len(calls) != 1:
        return
    call_id = str(calls[0].get("tool_use_id") or "")
    site = session.shared.calls.get(call_id)
    if site is None or site.event.tool_name != "Workflow":
        return
    result = as_dict(data.get("toolUseResult"))
    run = result.get("runId")
    if not isinstance(run, str):
        # Older results name the run only in their text: "Transcript dir: .../workflows/<run>".
        where = str(result.get("transcriptDir") or "") or as_text(calls[0].get("content"))
        found = _WORKFLOW_DIR.search(where[:4000])
        run = found.group(1) if found else None
    if run:
        session.workflow_calls.setdefault(run, call_id)


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
    elif kind == "attachment":
        _attachment(builder, data.get("attachment"), timestamp, line)
    elif kind in SESSION_RECORDS:
        _notice(builder, session_notice(data), timestamp, line)
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
    _notice(builder, text, timestamp, line, is_error=is_error)


def _attachment(builder: ThreadBuilder, attachment: Any, timestamp: str | None, line: int) -> None:
    prompt = queued_prompt(attachment)
    if prompt is not None and not prompt.lstrip().startswith("<task-notification>"):
        # A message the user typed while the agent worked, delivered between model calls.
        content = as_dict(attachment).get("prompt")
        message = {"role": "user", "content": content if isinstance(content, list) else prompt}
        builder.add_user(message, tool_use_result=None, timestamp=timestamp, line=line)
        return
    text, is_error = attachment_notice(attachment)
    if prompt is not None:
        text = f"Background task finished\n{prompt}"
    _notice(builder, text, timestamp, line, is_error=is_error)


def _notice(
    builder: ThreadBuilder, text: str, timestamp: str | None, line: int, *, is_error: bool = False
) -> None:
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


# -- abandoned branches --------------------------------------------------------------------


def _branch_marker(builder: ThreadBuilder, branch: Branch) -> Event:
    """The notice the branch folds under, where it branches off; its text comes once built."""
    stamp = branch.records[0].timestamp if branch.records else None
    turn = builder.current_turn(stamp)
    return builder.event(turn, EventKind.SYSTEM_NOTICE, None, text="", timestamp=stamp)


def _build_branches(session: _Session) -> list[tuple[Thread, Branch]]:
    threads: list[tuple[Thread, Branch]] = []
    numbers: dict[str, int] = {}
    for pending in session.pending:
        parent = pending.parent
        number = numbers[parent.id] = numbers.get(parent.id, 0) + 1
        prefix = "" if parent.id == "main" else f"{parent.id}-"
        thread = Thread(id=f"{prefix}branch-{number}", kind="branch", parent_thread=parent.id)
        _build(thread, pending.branch.records, session)
        preview = _first_text(thread)
        thread.title = preview or f"branch {number}"
        if pending.marker is not None:
            pending.marker.child_thread = thread.id
            pending.marker.text = _branch_label(pending.branch, thread)
            thread.parent_event = pending.marker.id
        threads.append((thread, pending.branch))
    return threads


def _branch_label(branch: Branch, thread: Thread) -> str:
    calls = sum(1 for turn in thread.turns if turn.usage is not None)
    tokens = thread.usage().total_tokens
    where = f", branching off after line {branch.fork_line}" if branch.fork_line else ""
    return (
        f"Abandoned branch ({_plural(branch.messages, 'message')}, "
        f"{_plural(calls, 'model call')}, {tokens:,} tokens){where}: the session was rewound "
        "or a response retried here, and went on below. Its tokens are counted in the totals."
    )


def _first_text(thread: Thread) -> str:
    kinds = (EventKind.USER_TEXT, EventKind.ASSISTANT_TEXT)
    for turn in thread.turns:
        for event in turn.events:
            if event.kind in kinds and event.text.strip():
                head = " ".join(event.text.split())
                return head[:80] + ("..." if len(head) > 80 else "")
    return ""


def _note_branches(transcript: Transcript, branches: list[tuple[Thread, Branch]]) -> None:
    if not branches:
        return
    messages = sum(branch.messages for _, branch in branches)
    tokens = sum(thread.usage().total_tokens for thread, _ in branches)
    transcript.notes.append(
        f"Messages on abandoned branches: {_plural(len(branches), 'branch', 'branches')} left "
        f"by a rewind or a retried response, {_plural(messages, 'message')}, {tokens:,} "
        "tokens; shown folded where they branch off, their tokens counted in the totals."
    )


def _plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


# -- subagents -----------------------------------------------------------------------------


@dataclass
class _Agents:
    """The subagent threads read from their files, and what links each to its call."""

    threads: dict[str, Thread]
    by_agent: dict[str, str] = field(default_factory=dict)  # agent id -> thread id
    workflows: dict[str, list[Thread]] = field(default_factory=dict)  # run id -> its agents
    metas: dict[str, dict[str, Any]] = field(default_factory=dict)

    def read(
        self, files: list[SourceFile], session_ids: set[str], uuids: set[str], session: _Session
    ) -> None:
        """`session_ids` and `uuids`: the session's, to tell its agents and what they inherited."""
        malformed = session.transcript.malformed
        for source in sorted(files, key=lambda f: f.name):
            agent_id = agent_id_of(source.name)
            if agent_id.startswith("acompact"):
                continue  # context compression runs as an internal agent, not the user's
            # A forked agent's file repeats the session's lines it inherited (same uuids).
            records = [r for r in _read([source], malformed) if r.uuid not in uuids]
            if _is_warmup(records):
                continue
            if not _belongs(records, session_ids):
                session.transcript.notes.append(
                    f"{source.name}: a subagent of another session (its sessionId is not this "
                    "session's), not shown."
                )
                continue
            run = _workflow_run(source.name)
            meta = self.metas.get(agent_id)
            thread = _subagent_thread(agent_id, records, meta, run, session)
            self.threads[thread.id] = thread
            self.by_agent[agent_id] = thread.id
            if run is not None:
                self.workflows.setdefault(run, []).append(thread)

    def link(self, session: _Session) -> None:
        """Each agent under its call: named by the call's result, its meta file or its run."""
        shared = session.shared
        link_subagents(self.threads, shared, self.by_agent)
        for agent_id, thread_id in self.by_agent.items():
            call_id = self.metas.get(agent_id, {}).get("toolUseId")
            site = shared.calls.get(call_id) if isinstance(call_id, str) else None
            if site is not None and self.threads[thread_id].parent_event is None:
                spawn(self.threads[thread_id], site, shared)
        for run, agents in self.workflows.items():
            run_site = shared.calls.get(session.workflow_calls.get(run, ""))
            # Each spawn goes right after the call: the last first, so that they read in order.
            for thread in reversed(agents):
                if run_site is not None and thread.parent_event is None:
                    spawn(thread, run_site, shared)


def _is_warmup(records: list[Record]) -> bool:
    for record in records:
        if record.kind == "user":
            content = as_dict(record.full().get("message")).get("content")
            text = content if isinstance(content, str) else None
            if isinstance(content, list) and content and isinstance(content[0], dict):
                text = content[0].get("text")
            return isinstance(text, str) and text.strip() == "Warmup"
    return False


def _belongs(records: list[Record], session_ids: set[str]) -> bool:
    """2.0.x keeps every session's agent files in one folder: keep only this session's."""
    ids = {s for s in map(_session_of, records[:5]) if s is not None}
    return not ids or not session_ids or bool(ids & session_ids)


def _workflow_run(name: str) -> str | None:
    parts = name.split("/")
    if len(parts) >= 4 and parts[-4] == "subagents" and parts[-3] == "workflows":
        return parts[-2]
    return None


def _subagent_thread(
    agent_id: str,
    records: list[Record],
    meta: dict[str, Any] | None,
    run: str | None,
    session: _Session,
) -> Thread:
    meta = meta or {}
    title = str(meta.get("description") or "")
    if not title and run is not None:
        prompt = " ".join((_first_user_text(records) or "").split())[:80]
        title = f"Workflow {run}" + (f": {prompt}" if prompt else "")
    title = title or str(meta.get("agentType") or meta.get("subagent_type") or "")
    thread = Thread(id=f"agent-{agent_id}", kind="subagent", title=title)
    _build_conversation(thread, records, session)
    return thread


def _note_missing_subagents(
    session: _Session, files: list[SourceFile], agent_files: list[SourceFile]
) -> None:
    """The session names subagents (or workflow runs) whose files are not in what we were given."""
    shared = session.shared
    present = {agent_id_of(f.name) for f in agent_files}
    folder = any("/subagents/" in f"/{f.name}" for f in files) or bool(agent_files)
    missing: dict[str, str] = {}
    for call_id, agent_id in shared.spawn_links:
        if agent_id not in present:
            missing.setdefault(agent_id, call_id)
    runs_present = {_workflow_run(f.name) for f in files}
    runs = (
        {} if folder else {r: c for r, c in session.workflow_calls.items() if r not in runs_present}
    )
    for agent_id, call_id in missing.items():
        _missing_notice(shared, call_id, f"The log of subagent {agent_id} is not in the upload.")
    for run, call_id in runs.items():
        _missing_notice(shared, call_id, f"The logs of workflow run {run} are not in the upload.")
    if not missing and not runs:
        return
    what = _plural(len(missing), "subagent") if missing else ""
    if runs:
        what += (" and " if what else "") + _plural(len(runs), "workflow run")
    if folder:
        verb = "has" if len(missing) + len(runs) == 1 else "have"
        note = f"{what} named by this session {verb} no file in the upload; their calls are "
        note += "shown without their logs."
    else:
        note = f"This session spawned {what} whose files were not uploaded: upload the session "
        note += "folder as a .zip (the session's .jsonl with its folder of the same name, or the "
        note += "agent-*.jsonl files beside it) to see them."
    session.transcript.notes.insert(0, note)


def _missing_notice(shared: Shared, call_id: str, text: str) -> None:
    site = shared.calls.get(call_id)
    if site is None:
        return
    events = site.turn.events
    at = events.index(site.event) + 1 if site.event in events else len(events)
    notice = Event(
        id=shared.ids.next(),
        kind=EventKind.SYSTEM_NOTICE,
        text=text,
        timestamp=site.event.timestamp,
        line=site.event.line,
    )
    events.insert(at, notice)


# -- 1.0.x inline sidechains ---------------------------------------------------------------


def _inline_sidechains(
    records: list[Record], threads: dict[str, Thread], session: _Session
) -> None:
    """1.0.x: sidechain conversations inline, each linked to the Task call that had its prompt."""
    shared = session.shared
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
        _build(thread, group, session)
        threads[thread.id] = thread
        call_id = prompts.pop(prompt, None)
        if call_id is not None:
            spawn(thread, shared.calls[call_id], shared)


def _first_user_text(records: list[Record]) -> str | None:
    for record in records:
        if record.kind == "user":
            content = as_dict(record.full().get("message")).get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "\n".join(
                    str(b.get("text"))
                    for b in content
                    if isinstance(b, dict) and b.get("type") == "text"
                )
    return None
