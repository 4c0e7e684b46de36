"""The beginning of a JSON value, read without its end: how detection looks at a line of any
length (a first record carrying a pasted 5 MB screenshot) for the cost of its first few kilobytes.
"""

from __future__ import annotations

import json
from typing import Any

# Where the text ran out: an object member or array item cut there reads as this.
CUT = ...

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


class _Cut(Exception):
    """The text ended inside the value being read."""


def decode_prefix(text: str) -> Any:
    """The JSON value at the start of `text`. A value the text cuts off is read as far as it
    goes: an object keeps its complete members and its first cut member as CUT (a cut object or
    array member is itself read as far as it goes). ValueError where the text is not JSON."""
    try:
        value, _ = _value(text, _skip(text, 0))
    except _Cut:
        return CUT
    return value


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _SPACE:
        index += 1
    return index


def _value(text: str, index: int) -> tuple[Any, int]:
    if index >= len(text):
        raise _Cut
    try:
        return _DECODER.raw_decode(text, index)
    except ValueError:
        if text[index] == "{":
            return _object(text, index + 1)
        if text[index] == "[":
            return _array(text, index + 1)
        if _runs_out(text[index:]):
            raise _Cut from None
        raise


def _runs_out(rest: str) -> bool:
    """True where a scalar that does not parse is the start of one the text cut off."""
    if rest.startswith('"'):
        return '"' not in rest[1:].replace("\\\\", "").replace('\\"', "")
    return rest == "-" or any(word.startswith(rest) for word in ("true", "false", "null"))


def _object(text: str, index: int) -> tuple[Any, int]:
    """Members of an object whose end lies past the text; returns as soon as one is cut."""
    members: dict[str, Any] = {}
    index = _skip(text, index)
    while index < len(text):
        if text[index] == ",":
            index = _skip(text, index + 1)
        if index >= len(text):
            break
        if text[index] != '"':
            raise ValueError(f"expected a member name at {index}")
        try:
            key, index = json.decoder.scanstring(text, index + 1)  # type: ignore[attr-defined]
        except ValueError:
            break
        index = _skip(text, index)
        if index < len(text) and text[index] != ":":
            raise ValueError(f"expected ':' at {index}")
        try:
            members[key], index = _value(text, _skip(text, index + 1))
        except _Cut:
            members[key] = CUT
            break
        index = _skip(text, index)
        if index < len(text) and text[index] == "}":
            return members, index + 1
    return members, len(text)


def _array(text: str, index: int) -> tuple[Any, int]:
    items: list[Any] = []
    index = _skip(text, index)
    while index < len(text):
        if text[index] == ",":
            index = _skip(text, index + 1)
        try:
            item, index = _value(text, index)
        except _Cut:
            items.append(CUT)
            break
        items.append(item)
        index = _skip(text, index)
        if index < len(text) and text[index] == "]":
            return items, index + 1
    return items, len(text)
