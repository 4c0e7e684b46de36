"""claude.ai data exports: the `conversations.json` of Settings > Privacy > Export data.

A JSON list of conversations `{uuid, name, summary, created_at, updated_at, account,
chat_messages}` (one conversation object alone is read too). A message is `{uuid, sender:
human | assistant, text, content, attachments, files, created_at, parent_message_uuid}`;
`content` holds blocks `text`, `thinking` (with `summaries`), `tool_use` (`id`, `name`,
`input`) and `tool_result` (`tool_use_id`, `name`, `content`, `is_error`), each with
`start_timestamp` / `stop_timestamp`. Exports before content blocks have only `text`. An
attachment carries the text extracted from it (`extracted_content`); `files` are named only.

One upload is one transcript, and a transcript's threads besides the first are subagents, so
an export of many conversations shows the one with the most messages (the latest, when equal)
and a note says how many others there are; uploading one conversation alone (the object, or a
one-item list) shows that one.

Editing a message or retrying a reply makes a branch: messages chain through
`parent_message_uuid`. The branch that leads to `current_leaf_message_uuid` (else to the last
message) is shown, and a note counts the messages left on other branches.

Exports carry no token counts, so these transcripts have no usage and no cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .errors import TranscriptFormatError
from .finish import finish_transcript
from .records import (
    RECORD_ERRORS,
    EventIds,
    SourceFile,
    as_dict,
    as_str,
    as_text,
    capped_raw,
    load_json_document,
    record_not_understood,
)
from .schema import Event, EventKind, MalformedLine, Thread, Transcript, Turn

FORMAT = "claude-ai-export"
# An attachment's extracted text past this is cut: a pasted book must not bloat the page.
ATTACHMENT_TEXT_CHARS = 20_000


def parse(files: list[SourceFile]) -> Transcript:
    transcript = Transcript(format=FORMAT)
    source = files[0]
    for other in files[1:]:
        transcript.notes.append(f"{other.name}: another export file, not shown.")
    conversation, count = _longest(load_json_document(source))
    if conversation is None:
        raise TranscriptFormatError(f"{source.name}: no conversation with chat_messages in it")
    if count > 1:
        transcript.notes.append(
            f"This export holds {count:,} conversations; shown is the one with the "
            f"most messages, {_quoted(conversation.get('name'))} ({conversation.get('uuid')}). "
            "To see another, upload that conversation alone (a JSON object from the list)."
        )
    _describe(transcript, conversation)
    thread = Thread(id="main", kind="main")
    transcript.threads.append(thread)
    builder = _Builder(thread, EventIds(), as_str(conversation.get("model")))
    for number, message in enumerate(conversation["chat_messages"], start=1):
        if not isinstance(message, dict):
            transcript.malformed.append(MalformedLine(source.name, number, "not a JSON object"))
    for number, message in _active_branch(conversation, transcript):
        try:
            builder.message(message, number)
        except RECORD_ERRORS as exc:
            record_not_understood(transcript.malformed, source.name, number, exc)
    transcript.notes.append("claude.ai exports record no token counts: no usage or cost is shown.")
    return finish_transcript(transcript)


def _longest(document: Any) -> tuple[dict[str, Any] | None, int]:
    """The conversation with the most messages (the latest, then the first, when equal) and
    how many there are, holding no more than two at a time (a big export is read a
    conversation at a time: json_document)."""
    items = document if isinstance(document, list) else [document]
    best: dict[str, Any] | None = None
    best_key: tuple[int, str] | None = None
    count = 0
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("chat_messages"), list):
            continue
        count += 1
        key = (len(item["chat_messages"]), str(item.get("updated_at") or ""))
        if best_key is None or key > best_key:
            best, best_key = item, key
    return best, count


def _quoted(name: Any) -> str:
    return f"“{name[:200]}”" if isinstance(name, str) and name else "(untitled)"


def _describe(transcript: Transcript, conversation: dict[str, Any]) -> None:
    transcript.session_id = as_str(conversation.get("uuid"))
    transcript.started_at = as_str(conversation.get("created_at"))
    transcript.model = as_str(conversation.get("model"))
    name = as_str(conversation.get("name"))
    if name:
        transcript.notes.append(f"Conversation: {name[:200]}")


def _active_branch(
    conversation: dict[str, Any], transcript: Transcript
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based position in chat_messages, message) along the branch the conversation ended on.
    The branch is found from each message's links alone; the messages on it are then read
    again, so that a big conversation is never held whole."""
    messages = conversation["chat_messages"]
    path = _branch(conversation, [(n, _links(m)) for n, m in _numbered(messages)], transcript)
    return _messages_at(messages, path)


def _numbered(messages: list[Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    return ((n, m) for n, m in enumerate(messages, 1) if isinstance(m, dict))


def _links(message: dict[str, Any]) -> dict[str, Any]:
    return {k: message[k] for k in ("uuid", "parent_message_uuid") if k in message}


def _branch(
    conversation: dict[str, Any],
    numbered: list[tuple[int, dict[str, Any]]],
    transcript: Transcript,
) -> list[int]:
    by_id = {m["uuid"]: (n, m) for n, m in numbered if isinstance(m.get("uuid"), str)}
    if not numbered or not any("parent_message_uuid" in m for _, m in numbered):
        return [n for n, _ in numbered]
    leaf = by_id.get(str(conversation.get("current_leaf_message_uuid")))
    path: list[int] = []
    node: tuple[int, dict[str, Any]] | None = leaf or numbered[-1]
    seen: set[int] = set()
    while node is not None and node[0] not in seen:
        seen.add(node[0])
        path.append(node[0])
        parent = node[1].get("parent_message_uuid")
        node = by_id.get(parent) if isinstance(parent, str) else None
    left = len(numbered) - len(path)
    if left:
        transcript.notes.append(
            f"{left} message{'s' if left != 1 else ''} on other branches (edited or retried "
            "messages) left out; shown is the branch the conversation ended on."
        )
    return path[::-1]


def _messages_at(messages: list[Any], path: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The messages at the positions of `path`, in its order: read in one pass where it runs
    forward (as a branch does), else gathered first."""
    wanted = set(path)
    if path == sorted(path):
        return ((n, m) for n, m in _numbered(messages) if n in wanted)
    found = {n: m for n, m in _numbered(messages) if n in wanted}
    return ((n, found[n]) for n in path)


class _Builder:
    def __init__(self, thread: Thread, ids: EventIds, model: str | None) -> None:
        self.thread, self.ids, self.model = thread, ids, model
        self.calls: dict[str, tuple[Turn, Event]] = {}
        self.waiting: list[Event] = []  # tool calls whose result has not come yet

    def event(self, turn: Turn, kind: EventKind, line: int, **fields: Any) -> Event:
        event = Event(id=self.ids.next(), kind=kind, line=line, **fields)
        turn.events.append(event)
        return event

    def message(self, message: dict[str, Any], number: int) -> None:
        sender = message.get("sender")
        stamp = as_str(message.get("created_at"))
        turn = Turn(
            index=len(self.thread.turns),
            timestamp=stamp,
            model=self.model if sender == "assistant" else None,
        )
        self.thread.turns.append(turn)
        content = message.get("content")
        blocks = content if isinstance(content, list) and content else None
        if sender not in ("human", "assistant"):
            self.event(
                turn,
                EventKind.UNKNOWN,
                number,
                raw_type=f"sender:{sender}",
                raw=capped_raw(message),
            )
            return
        if blocks is None:
            blocks = [{"type": "text", "text": as_str(message.get("text")) or ""}]
        for block in blocks:
            if isinstance(block, dict):
                self.block(turn, block, sender, stamp, number)
        if sender == "human":
            self.attachments(turn, message, stamp, number)

    def block(
        self, turn: Turn, block: dict[str, Any], sender: str, stamp: str | None, number: int
    ) -> None:
        kind = block.get("type")
        stamp = as_str(block.get("start_timestamp")) or stamp
        where = {"timestamp": stamp}
        if kind == "text":
            text = as_str(block.get("text")) or ""
            if text.strip():
                role = EventKind.USER_TEXT if sender == "human" else EventKind.ASSISTANT_TEXT
                self.event(turn, role, number, text=text, **where)
        elif kind == "thinking":
            self.event(turn, EventKind.REASONING, number, text=_thinking_text(block), **where)
        elif kind == "tool_use":
            call_id = as_str(block.get("id"))
            call = self.event(
                turn,
                EventKind.TOOL_CALL,
                number,
                tool_name=as_str(block.get("name")) or "?",
                call_id=call_id,
                arguments=block.get("input"),
                **where,
            )
            self.waiting.append(call)
            if call_id:
                self.calls[call_id] = (turn, call)
        elif kind == "tool_result":
            self.tool_result(turn, block, stamp, number)
        else:
            self.event(
                turn, EventKind.UNKNOWN, number, raw_type=f"block:{kind}", raw=capped_raw(block)
            )

    def tool_result(
        self, turn: Turn, block: dict[str, Any], stamp: str | None, number: int
    ) -> None:
        call_id = as_str(block.get("tool_use_id"))
        name = as_str(block.get("name"))
        call = self.calls[call_id][1] if call_id in self.calls else None
        if call is None:  # older exports name the tool but not the call
            call = next((c for c in self.waiting if c.tool_name == name and not c.call_id), None)
        if call in self.waiting:
            self.waiting.remove(call)
        self.event(
            turn,
            EventKind.TOOL_RESULT,
            number,
            text=_result_text(block.get("content")),
            tool_name=name or (call.tool_name if call else None),
            call_id=call_id or (call.call_id if call else None),
            is_error=block.get("is_error") is True,
            timestamp=stamp,
        )

    def attachments(
        self, turn: Turn, message: dict[str, Any], stamp: str | None, number: int
    ) -> None:
        for attachment in _dicts(message.get("attachments")):
            name = as_str(attachment.get("file_name")) or "attachment"
            kind = as_str(attachment.get("file_type")) or "file"
            size = attachment.get("file_size")
            about = f"{kind}, {size:,} bytes" if isinstance(size, int) else kind
            text = as_str(attachment.get("extracted_content")) or ""
            if len(text) > ATTACHMENT_TEXT_CHARS:
                cut = len(text) - ATTACHMENT_TEXT_CHARS
                text = text[:ATTACHMENT_TEXT_CHARS] + f"\n... [{cut:,} more characters]"
            body = f"Attached {name} ({about})" + (f"\n\n{text}" if text else "")
            self.event(turn, EventKind.SYSTEM_NOTICE, number, text=body, timestamp=stamp)
        files = [as_str(f.get("file_name")) or "file" for f in _dicts(message.get("files"))]
        if files:
            text = "Files sent (their content is not in the export): " + ", ".join(files)
            self.event(turn, EventKind.SYSTEM_NOTICE, number, text=text, timestamp=stamp)


def _thinking_text(block: dict[str, Any]) -> str:
    text = as_str(block.get("thinking")) or ""
    if text:
        return text
    summaries = [as_str(as_dict(s).get("summary")) for s in _dicts(block.get("summaries"))]
    return "\n".join(s for s in summaries if s)


def _result_text(content: Any) -> str:
    """A tool result's text; a web search's pages as their title, address and text."""
    if not isinstance(content, list):
        return as_text(content)
    parts = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "knowledge":
            head = " ".join(s for s in (as_str(item.get("title")), as_str(item.get("url"))) if s)
            parts.append(head + (f"\n{item['text']}" if isinstance(item.get("text"), str) else ""))
        else:
            parts.append(as_text(item))
    return "\n\n".join(parts)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
