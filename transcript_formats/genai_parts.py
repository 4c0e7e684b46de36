"""What Gemini CLI and its fork Qwen Code share: Gemini API contents (`parts`), usage metadata
and tool-result displays. Both record a message as Gemini's Part list: `{text}`, `{text,
thought: true}` (reasoning), `{functionCall: {id, name, args}}`, `{functionResponse: {id, name,
response: {output | error}}}`, `{inlineData}` / `{fileData}` (attachments).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .diffs import new_file_diff, text_diff, with_header
from .schema import Usage


@dataclass(frozen=True, slots=True)
class Call:
    call_id: str | None
    name: str
    args: Any


@dataclass(frozen=True, slots=True)
class Response:
    call_id: str | None
    name: str | None
    text: str
    is_error: bool


def parts_of(content: Any) -> list[Any]:
    """A PartListUnion as a list: a string, one part, or a list of parts."""
    if content is None:
        return []
    return content if isinstance(content, list) else [content]


def visible_text(content: Any) -> str:
    """The text parts that are no reasoning, joined; attachments are named, not inlined."""
    texts = []
    for part in parts_of(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and not part.get("thought"):
            texts.append(_part_text(part))
    return "".join(text for text in texts if text)


def thought_texts(content: Any) -> list[str]:
    return [
        part["text"]
        for part in parts_of(content)
        if isinstance(part, dict) and part.get("thought") and isinstance(part.get("text"), str)
    ]


def _part_text(part: dict[str, Any]) -> str:
    if isinstance(part.get("text"), str):
        return str(part["text"])
    for key in ("inlineData", "fileData"):
        data = part.get(key)
        if isinstance(data, dict):
            kind = data.get("mimeType") or "file"
            where = data.get("fileUri")
            return f"[{kind}{': ' + where if isinstance(where, str) else ''}]"
    return ""


def calls_of(content: Any) -> list[Call]:
    calls = []
    for part in parts_of(content):
        call = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(call, dict):
            calls.append(
                Call(str_or_none(call.get("id")), tool_name(call.get("name")), call.get("args"))
            )
    return calls


def responses_of(content: Any) -> list[Response]:
    responses = []
    for part in parts_of(content):
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            body = response.get("response")
            error = body.get("error") if isinstance(body, dict) else None
            responses.append(
                Response(
                    str_or_none(response.get("id")),
                    str_or_none(response.get("name")),
                    response_text(body),
                    error is not None,
                )
            )
    return responses


def is_only_responses(content: Any) -> bool:
    """A user-role content that carries tool results back to the model, no prompt."""
    parts = parts_of(content)
    return bool(parts) and all(isinstance(p, dict) and "functionResponse" in p for p in parts)


def response_text(body: Any) -> str:
    """A functionResponse's `response`: {output} or {error}, or anything else as JSON."""
    if isinstance(body, dict):
        for key in ("output", "error", "content", "llmContent"):
            if key in body:
                return plain(body[key])
    return plain(body)


def result_text(result: Any, display: Any) -> str:
    """A tool call record's result: the display string the CLI showed, else the response parts."""
    if isinstance(display, str) and display.strip():
        return display
    texts = [r.text for r in responses_of(result)]
    if texts:
        return "\n".join(texts)
    return visible_text(result) if result else ""


def plain(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, (str, dict)) for p in value):
        text = visible_text(value)
        if text:
            return text
    return json.dumps(value, ensure_ascii=False, default=str)


def tool_name(value: Any) -> str:
    return value if isinstance(value, str) and value.strip() else "?"


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_of(
    *,
    prompt: Any,
    candidates: Any,
    cached: Any,
    thoughts: Any,
    tool: Any,
    total: Any,
    thoughts_in_candidates: bool,
) -> Usage:
    """One model call's usage from Gemini's counts.

    `prompt` includes `cached`, which becomes cache reads. `tool` (tool-use prompt tokens) is
    billed as input. Gemini's own API reports `thoughts` apart from `candidates`
    (total = prompt + candidates + thoughts + tool) and they are output too; a gateway that
    speaks OpenAI's API (Qwen Code's default) puts reasoning inside `candidates` already
    (total = prompt + candidates + tool), and then they are not added again. The total tells
    which; without one, `thoughts_in_candidates` says what the format's writer does.
    """
    p, o, c, t, u = count(prompt), count(candidates), count(cached), count(thoughts), count(tool)
    s = count(total)
    inside = s == p + o + u if s else thoughts_in_candidates
    return Usage(
        input_tokens=max(0, p - c) + u,
        output_tokens=o + (0 if inside else t),
        cache_read_tokens=min(c, p) if p else c,
    )


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    diff: str


def file_diff(display: Any) -> FileDiff | None:
    """An edit's display ({fileDiff, fileName, filePath?, originalContent, newContent}) as a
    diff: of the two contents when both are whole, else the recorded diff (its Index/==== head
    dropped)."""
    if not isinstance(display, dict) or not isinstance(display.get("fileDiff"), str):
        return None
    path = display.get("filePath") or display.get("fileName")
    path = path if isinstance(path, str) and path else "?"
    old, new = display.get("originalContent"), display.get("newContent")
    if isinstance(new, str) and not display.get("truncatedForSession"):
        if old is None:
            return FileDiff(path, new_file_diff(path, new))
        return FileDiff(path, text_diff(path, old if isinstance(old, str) else "", new))
    diff = _strip_index(display["fileDiff"])
    return FileDiff(path, with_header(path, diff))


def _strip_index(diff: str) -> str:
    # jsdiff writes "Index: name" and a line of "=" before the --- / +++ lines.
    lines = diff.split("\n")
    while lines and (lines[0].startswith("Index:") or lines[0].startswith("====")):
        lines.pop(0)
    return "\n".join(lines)
