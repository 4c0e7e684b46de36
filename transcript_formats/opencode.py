"""OpenCode sessions: its storage folder (~/.local/share/opencode/storage), or `opencode export`.

The storage is a folder of small JSON files, one per object, told apart by what they hold
(their folders moved between versions): a session {id, projectID, directory, parentID?, title,
version, time} under session/, a message {id, sessionID, role, time, modelID, providerID, cost,
tokens, error?} under message/<session>/, and a part {id, messageID, sessionID, type, ...} under
part/<message>/. An export is one document {info: session, messages: [{info, parts}]}.

Part types: text and reasoning; tool {tool, callID, state: {status, input, output | error,
metadata}}; step-start and step-finish, which bound one model call inside an assistant message
(step-finish carries that call's tokens and cost); file, agent, subtask, retry, compaction;
snapshot and patch are skipped. A `task` tool call starts a child session (its parentID is the
session), which becomes a subagent thread under that call (state.metadata.sessionId names it).

Tokens, as OpenCode stores them: input without the cached part, output without reasoning
(reasoning is its own count, which we add to output), cache.read and cache.write. A message's
`tokens` are its last step's only, so the step-finish parts are summed; a message without step
parts (early versions) is charged its own `tokens`. The messages' `cost` (USD, from OpenCode's
price list, 0 where the provider bills otherwise) is the log's cost when any is above zero.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .apply_patch import envelope_to_diffs, find_envelope
from .diffs import TrackedFiles, new_file_diff, text_diff
from .disk_texts import DiskText, held
from .errors import TranscriptFormatError
from .finish import finish_transcript
from .recorded_diffs import exact_diff
from .records import (
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_dict,
    as_str,
    as_text,
    capped_raw,
    images_of,
    load_json_document,
    record_not_understood,
)
from .schema import Event, EventKind, MalformedLine, Thread, Transcript, Turn, Usage
from .spawns import spawn_after

STORAGE_FORMAT = "opencode-storage"
EXPORT_FORMAT = "opencode-export"
_SKIPPED_PARTS = frozenset({"snapshot", "patch", "step-start", "agent"})


@dataclass
class _Store:
    """Every object found, by id; `where` names the file (and position) each came from."""

    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by session id
    parts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by message id
    where: dict[int, tuple[str, int]] = field(default_factory=dict)
    # For an upload, the JSON on disk of each message and part, by the id of what stands for it.
    packed: dict[int, DiskText] = field(default_factory=dict)
    # For an upload of an export, each message's own parts as one JSON list on disk, by the id of
    # the message's stand-in: one entry a message, not one a part.
    bundled: dict[int, DiskText] = field(default_factory=dict)
    read_ids: list[int] = field(default_factory=list)  # of messages and parts read back, held

    def add(self, value: Any, source: str, position: int) -> bool:
        if not isinstance(value, dict):
            return False
        kind = kind_of(value)
        if kind == "part":
            kept = self._pack(value, {"id": value.get("id")})
            self.parts.setdefault(str(value["messageID"]), []).append(kept)
        elif kind == "message":
            created = as_dict(value.get("time")).get("created")
            kept = self._pack(value, {"id": value.get("id"), "created": created})
            self.messages.setdefault(str(value["sessionID"]), []).append(kept)
        elif kind == "session":
            kept = self.sessions.setdefault(str(value["id"]), value)
        else:
            return False
        self.where[id(kept)] = (source, position)
        return True

    def add_with_parts(self, info: dict[str, Any], parts: list[Any], source: str, at: int) -> bool:
        """An export's message and its parts. While an upload is parsed, the parts that name
        this message wait on disk as one list beside it; others are added one by one."""
        if not self.add(info, source, at):
            return False
        own: list[dict[str, Any]] = []
        if kind_of(info) == "message":
            message_id = info.get("id")
            own = [
                p for p in parts if kind_of(as_dict(p)) == "part" and p["messageID"] == message_id
            ]
        bundle = held(json.dumps(own)) if own else None
        if isinstance(bundle, DiskText):
            stub = self.messages[str(info["sessionID"])][-1]
            self.bundled[id(stub)] = bundle
            taken = {id(p) for p in own}
            parts = [p for p in parts if id(p) not in taken]
        for part in parts:
            self.add(part, source, at)
        return True

    def bundled_parts(self, kept: dict[str, Any]) -> list[dict[str, Any]]:
        """The parts an export's message brought, read back from disk (held until
        `forget_read`, like what `read` gives)."""
        bundle = self.bundled.get(id(kept))
        if bundle is None:
            return []
        parts: list[dict[str, Any]] = json.loads(str(bundle))
        for part in parts:
            self.where[id(part)] = self.where[id(kept)]
            self.read_ids.append(id(part))
        return parts

    def _pack(self, value: dict[str, Any], stub: dict[str, Any]) -> dict[str, Any]:
        """All messages and parts wait here until the build; while an upload is parsed, each
        waits as its JSON on disk, and `stub` (what ordering them needs) stands for it."""
        text = held(json.dumps(value))
        if not isinstance(text, DiskText):
            return value
        self.packed[id(stub)] = text
        return stub

    def read(self, kept: dict[str, Any]) -> dict[str, Any]:
        """A message or part as it was found, known where it was until `forget_read` (its id
        may be another object's once it is gone)."""
        text = self.packed.get(id(kept))
        if text is None:
            return kept
        found: dict[str, Any] = json.loads(str(text))
        self.where[id(found)] = self.where[id(kept)]
        self.read_ids.append(id(found))
        return found

    def forget_read(self) -> None:
        for number in self.read_ids:
            self.where.pop(number, None)
        self.read_ids.clear()


def kind_of(value: dict[str, Any]) -> str | None:
    """ "part", "message" or "session" for an OpenCode storage object, else None."""
    if isinstance(value.get("messageID"), str) and isinstance(value.get("sessionID"), str):
        return "part" if isinstance(value.get("type"), str) else None
    if isinstance(value.get("sessionID"), str) and value.get("role") in ("user", "assistant"):
        return "message"
    if isinstance(value.get("id"), str) and "projectID" in value and "directory" in value:
        return "session"
    return None


def is_export(value: Any) -> bool:
    messages = as_dict(value).get("messages")
    return (
        isinstance(as_dict(value).get("info"), dict)
        and isinstance(messages, list)
        and bool(messages)
        and all(isinstance(m, dict) and "info" in m and "parts" in m for m in messages)
    )


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=STORAGE_FORMAT)
    store = _Store()
    for source in files:
        try:
            document = load_json_document(source)
        except TranscriptFormatError as exc:
            transcript.malformed.append(MalformedLine(source.name, 1, str(exc)[:300]))
            continue
        if is_export(document):
            transcript.format = EXPORT_FORMAT
            _add_export(store, document, source.name, transcript.malformed)
        elif not store.add(document, source.name, 0):
            reason = "not an OpenCode session, message or part"
            transcript.malformed.append(MalformedLine(source.name, 1, reason))
    _Builder(transcript, store).build()
    return finish_transcript(transcript)


def _add_export(
    store: _Store, document: dict[str, Any], name: str, malformed: list[MalformedLine]
) -> None:
    # An export's position is the message's place in its list: a JSON document has no lines.
    store.add(document["info"], name, 0)
    for number, message in enumerate(document["messages"], start=1):
        info, parts = message.get("info"), message.get("parts")
        if not store.add_with_parts(info, parts if isinstance(parts, list) else [], name, number):
            malformed.append(MalformedLine(name, number, "a message without its info"))


class _Builder:
    def __init__(self, transcript: Transcript, store: _Store) -> None:
        self.transcript, self.store = transcript, store
        self.ids = EventIds()
        self.files = TrackedFiles()
        # `task` calls, to hang child sessions under: (turn, call, the session it names)
        self.tasks: list[tuple[Turn, Event, str | None]] = []
        self.costs: list[float] = []

    def build(self) -> None:
        root, children = self._sessions()
        if root is None:
            return
        info = self.store.sessions.get(root, {})
        t = self.transcript
        t.session_id = root
        t.cli_version = as_str(info.get("version"))
        t.cwd = as_str(info.get("directory"))
        self.files.cwd = t.cwd
        main = Thread(id="main", kind="main", title=as_str(info.get("title")) or "")
        t.threads.append(main)
        self._thread(main, root)
        for child in children:
            # A session id is the thread's id (and anchor); one spelled "main" must not pass for it.
            thread = Thread(id=child if child != "main" else "session-main", kind="subagent")
            thread.parent_thread = "main"
            thread.title = as_str(self.store.sessions.get(child, {}).get("title")) or child
            t.threads.append(thread)
            self._thread(thread, child)
        self._link(t.threads[1:])
        if sum(self.costs) > 0:
            t.cost_usd = round(sum(self.costs), 6)
        self._orphan_parts()

    def _orphan_parts(self) -> None:
        """Parts whose message file is missing cannot be placed: each such message is reported."""
        held = {str(m.get("id")) for listed in self.store.messages.values() for m in listed}
        for message_id, parts in self.store.parts.items():
            if message_id not in held:
                source = self.store.where.get(id(parts[0]), ("?", 0))[0]
                reason = f"{len(parts)} part(s) of message {message_id[:100]}, which is not here"
                self.transcript.malformed.append(MalformedLine(source, 0, reason))

    def _sessions(self) -> tuple[str | None, list[str]]:
        """The session shown, and the sessions under it (a child's parentID names its parent)."""
        known = set(self.store.sessions) | set(self.store.messages)
        if not known:
            return None, []
        parent = {s: as_str(self.store.sessions.get(s, {}).get("parentID")) for s in known}
        roots = [s for s in known if parent[s] not in known]
        root = max(roots or list(known), key=lambda s: (self._updated(s), s))
        others = [s for s in roots if s != root]
        if others:
            self.transcript.notes.append(
                f"The folder holds {len(others)} other session(s), not shown: "
                + ", ".join(sorted(others)[:10])
            )
        under: dict[str, list[str]] = {}
        for session in sorted(known, key=lambda s: (self._created(s), s)):
            under.setdefault(parent[session] or "", []).append(session)
        children: list[str] = []
        seen, frontier = {root}, [root]
        while frontier:
            found = [c for p in frontier for c in under.get(p, []) if c not in seen]
            seen.update(found)
            children += found
            frontier = found
        return root, children

    def _updated(self, session: str) -> float:
        time = as_dict(self.store.sessions.get(session, {}).get("time"))
        stamps = [_number(time.get("updated")), _number(time.get("created"))]
        stamps += [self._created_of(m) for m in self.store.messages.get(session, [])]
        return max(stamps)

    def _created(self, session: str) -> float:
        return _number(as_dict(self.store.sessions.get(session, {}).get("time")).get("created"))

    def _created_of(self, message: dict[str, Any]) -> float:
        # A message waiting on disk is stood for by {"id", "created"} (_Store.add).
        if id(message) in self.store.packed:
            return _number(message.get("created"))
        return _number(as_dict(message.get("time")).get("created"))

    def _thread(self, thread: Thread, session: str) -> None:
        messages = sorted(
            self.store.messages.get(session, []),
            key=lambda m: (self._created_of(m), str(m.get("id"))),
        )
        for message in messages:
            source, position = self.store.where.get(id(message), ("?", 0))
            try:
                self._message(thread, self.store.read(message), self.store.bundled_parts(message))
            except RECORD_ERRORS as exc:
                record_not_understood(self.transcript.malformed, source, position, exc)
            finally:
                self.store.forget_read()

    def _parts(
        self, message: dict[str, Any], bundled: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        parts = self.store.parts.get(str(message.get("id")), [])
        found = bundled + [self.store.read(p) for p in parts]
        return sorted(found, key=lambda p: str(p.get("id")))

    def _message(
        self, thread: Thread, message: dict[str, Any], bundled: list[dict[str, Any]]
    ) -> None:
        stamp = _iso(as_dict(message.get("time")).get("created"))
        parts = self._parts(message, bundled)
        if message.get("role") == "user":
            turn = _new_turn(thread, stamp)
            for part in parts:
                self._user_part(turn, part)
            return
        self.costs.append(_cost(message.get("cost")))
        _Call(self, thread, message, stamp).read(parts)

    def _user_part(self, turn: Turn, part: dict[str, Any]) -> None:
        kind = part.get("type")
        if kind == "text":
            text = as_text(part.get("text"))
            # OpenCode adds synthetic text (a file's content, a command's output) as context.
            notice = part.get("synthetic") is True
            self.event(
                turn, EventKind.SYSTEM_NOTICE if notice else EventKind.USER_TEXT, part, text=text
            )
        elif kind == "file":
            self.file_part(turn, part)
        elif kind == "compaction":
            self.event(turn, EventKind.COMPACTION, part, text="Conversation compacted")
        elif kind == "subtask":
            text = f"Subtask for {as_text(part.get('agent'))}: {as_text(part.get('description'))}"
            self.event(turn, EventKind.SYSTEM_NOTICE, part, text=text)
        elif kind not in _SKIPPED_PARTS:
            self.unknown(turn, part)

    def file_part(self, turn: Turn, part: dict[str, Any]) -> None:
        name = as_str(part.get("filename")) or as_str(part.get("url")) or "file"
        mime = as_str(part.get("mime")) or ""
        url = as_str(part.get("url")) or ""
        images = (
            images_of([{"type": "image_url", "image_url": {"url": url}}])
            if mime.startswith("image/")
            else ()
        )
        self.event(
            turn,
            EventKind.USER_TEXT,
            part,
            text=f"[attached {mime or 'file'}: {name[:200]}]",
            images=images if url.startswith("data:") else (),
        )

    def event(self, turn: Turn, kind: EventKind, part: dict[str, Any], **fields: Any) -> Event:
        position = self.store.where.get(id(part), ("", 0))[1]
        time = as_dict(part.get("time"))
        fields.setdefault("timestamp", _iso(time.get("start")) or turn.timestamp)
        event = Event(id=self.ids.next(), kind=kind, line=position or None, **fields)
        turn.events.append(event)
        return event

    def unknown(self, turn: Turn, part: dict[str, Any]) -> None:
        kind = str(part.get("type"))
        self.event(turn, EventKind.UNKNOWN, part, raw_type=kind, raw=capped_raw(part))

    def _link(self, subagents: list[Thread]) -> None:
        """Hang each child session under the task call that names it, else the next unnamed."""
        named = {session: (turn, call) for turn, call, session in self.tasks if session}
        spare = [(turn, call) for turn, call, session in self.tasks if not session]
        for thread in subagents:
            found = named.get(thread.id) or (spare.pop(0) if spare else None)
            if found is None:
                continue
            turn, call = found
            parent = next(t for t in self.transcript.threads if any(u is turn for u in t.turns))
            if parent is thread:
                continue
            spawn_after(thread, parent, turn, call, self.ids)


class _Call:
    """One assistant message: each step-start .. step-finish is a model call of its own."""

    def __init__(
        self, builder: _Builder, thread: Thread, message: dict[str, Any], stamp: str | None
    ) -> None:
        self.b, self.thread, self.message, self.stamp = builder, thread, message, stamp
        self.model = as_str(message.get("modelID"))
        self.turn: Turn | None = None
        self.steps = 0

    def current(self) -> Turn:
        if self.turn is None:
            self.turn = _new_turn(self.thread, self.stamp, self.model)
        return self.turn

    def read(self, parts: list[dict[str, Any]]) -> None:
        summary = self.message.get("summary") is True
        for part in parts:
            kind = part.get("type")
            if kind == "step-start":
                if self.turn is not None and self.turn.events:
                    self.turn = None
            elif kind == "step-finish":
                self.steps += 1
                turn = self.current()
                turn.usage = _add(turn.usage, _usage(part.get("tokens")))
                self.turn = None
            elif kind in ("text", "reasoning") and as_text(part.get("text")):
                # The text of a summary message is the compaction's summary.
                shown = EventKind.COMPACTION if summary else EventKind.ASSISTANT_TEXT
                shown = EventKind.REASONING if kind == "reasoning" else shown
                self.b.event(self.current(), shown, part, text=as_text(part.get("text")))
            elif kind == "tool":
                self._tool(part)
            elif kind == "retry":
                error = as_dict(as_dict(part.get("error")).get("data"))
                text = f"Retry {part.get('attempt')}: {as_text(error.get('message'))}"
                self.b.event(
                    self.current(), EventKind.SYSTEM_NOTICE, part, text=text, is_error=True
                )
            elif kind == "file":
                self.b.file_part(self.current(), part)
            elif kind == "compaction":
                self.b.event(
                    self.current(), EventKind.COMPACTION, part, text="Conversation compacted"
                )
            elif kind not in _SKIPPED_PARTS and kind not in ("text", "reasoning"):
                self.b.unknown(self.current(), part)
        self._finish()

    def _finish(self) -> None:
        usage = _usage(self.message.get("tokens")) if self.steps == 0 else None
        if usage is not None and usage.total_tokens:
            # Early versions kept no steps: the message's own tokens are its one call's.
            target = self.current()
            target.usage = _add(target.usage, usage)
        error = as_dict(self.message.get("error"))
        if error:
            data = as_dict(error.get("data"))
            text = as_text(data.get("message")) or as_text(error.get("name")) or "error"
            turn = self.turn or self.current()
            self.b.event(turn, EventKind.SYSTEM_NOTICE, {}, text=text, is_error=True)

    def _tool(self, part: dict[str, Any]) -> None:
        turn = self.current()
        state = as_dict(part.get("state"))
        name = as_str(part.get("tool")) or "?"
        call_id = as_str(part.get("callID"))
        args = state.get("input")
        call = self.b.event(
            turn, EventKind.TOOL_CALL, part, tool_name=name, call_id=call_id, arguments=args
        )
        call.timestamp = _iso(as_dict(state.get("time")).get("start")) or call.timestamp
        metadata = as_dict(state.get("metadata"))
        if name == "task":
            self.b.tasks.append((turn, call, as_str(metadata.get("sessionId"))))
        status = state.get("status")
        if status not in ("completed", "error"):
            return
        exit_code = metadata.get("exit")
        failed = status == "error" or (isinstance(exit_code, int) and exit_code != 0)
        text = as_text(state.get("error") if status == "error" else state.get("output"))
        images = images_of(
            [
                {"type": "image_url", "image_url": {"url": a.get("url")}}
                for a in state.get("attachments") or []
                if isinstance(a, dict) and str(a.get("mime") or "").startswith("image/")
            ]
        )
        self.b.event(
            turn,
            EventKind.TOOL_RESULT,
            part,
            tool_name=name,
            call_id=call_id,
            text=text,
            is_error=failed,
            images=images,
            timestamp=_iso(as_dict(state.get("time")).get("end")) or call.timestamp,
        )
        if not failed:
            for path, diff in _file_diffs(name, as_dict(args), metadata, self.b.files):
                self.b.event(
                    turn,
                    EventKind.FILE_CHANGE,
                    part,
                    tool_name=name,
                    call_id=call_id,
                    path=path,
                    diff=diff,
                )


def _file_diffs(
    name: str, args: dict[str, Any], metadata: dict[str, Any], files: TrackedFiles
) -> list[tuple[str, str]]:
    """edit {filePath, oldString, newString}, write {filePath, content}, multiedit, patch."""
    if name in ("patch", "apply_patch"):
        envelope = find_envelope(as_text(args.get("patchText") or args.get("input")))
        return (
            [(d.move_to or d.path, d.diff) for d in envelope_to_diffs(envelope, files)]
            if envelope
            else []
        )
    path = as_str(args.get("filePath")) or as_str(args.get("path"))
    if not path or name not in ("edit", "write", "multiedit"):
        return []
    filediff = as_dict(metadata.get("filediff"))
    before, after = filediff.get("before"), filediff.get("after")
    if isinstance(before, str) and isinstance(after, str):
        return [(path, text_diff(path, before, after))]
    results = metadata.get("results")  # multiedit: one metadata per edit
    recorded = [as_str(metadata.get("diff"))] + [
        as_str(as_dict(r).get("diff")) for r in (results if isinstance(results, list) else [])
    ]
    diffs = [exact_diff(d, path) for d in recorded if d]
    if any(diffs):
        return [(path, d) for d in diffs if d]
    if (
        name == "write"
        and isinstance(args.get("content"), str)
        and metadata.get("exists") is not True
    ):
        return [(path, new_file_diff(path, args["content"]))]
    if name == "edit" and isinstance(args.get("oldString"), str):
        return [(path, text_diff(path, args["oldString"], as_text(args.get("newString"))))]
    return []


def _new_turn(thread: Thread, stamp: str | None, model: str | None = None) -> Turn:
    turn = Turn(index=len(thread.turns), timestamp=stamp, model=model)
    thread.turns.append(turn)
    return turn


def _usage(tokens: Any) -> Usage | None:
    tokens = as_dict(tokens)
    if not tokens:
        return None
    cache = as_dict(tokens.get("cache"))
    return Usage(
        input_tokens=_int(tokens.get("input")),
        output_tokens=_int(tokens.get("output")) + _int(tokens.get("reasoning")),
        cache_read_tokens=_int(cache.get("read")),
        cache_write_tokens=_int(cache.get("write")),
    )


def _add(total: Usage | None, more: Usage | None) -> Usage | None:
    if more is None:
        return total
    if total is None:
        return more
    total.add(more)
    return total


def _iso(ms: Any) -> str | None:
    if isinstance(ms, (int, float)) and not isinstance(ms, bool) and 0 < ms < 1e14:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    return None


def _cost(value: Any) -> float:
    # USD; a value no session could cost (negative, infinite, not a number) counts as none.
    cost = _number(value)
    return cost if math.isfinite(cost) and 0 <= cost < 1e6 else 0.0


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
