"""The one writer of the task.toml files that importers generate: a header comment naming the
command and the source, then keys, comments and tables in the order given. Values are written
on one line each (strings with JSON escapes, tables inline); a key whose value is None is left
out, as TOML has no null."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any


class Manifest:
    def __init__(self, header: str) -> None:
        # A header ending in a newline leaves a blank line before the first key.
        self._lines = [header]

    def comment(self, text: str) -> Manifest:
        self._lines.append(f"# {text}")
        return self

    def set(self, key: str, value: Any) -> Manifest:
        if value is not None:
            self._lines.append(f"{toml_key(key)} = {toml_value(value)}")
        return self

    def rows(self, key: str, rows: list[Any]) -> Manifest:
        """An array written one element a line."""
        self._lines += [f"{toml_key(key)} = [", *(f"  {toml_value(r)}," for r in rows), "]"]
        return self

    def table(
        self, name: str, values: Mapping[str, Any], *, array: bool = False, comment: str = ""
    ) -> Manifest:
        """A table (`[[name]]` for an entry of an array of tables) after a blank line."""
        self._lines.append("")
        if comment:
            self.comment(comment)
        self._lines.append(f"[[{name}]]" if array else f"[{name}]")
        for key, value in values.items():
            self.set(key, value)
        return self

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"


def toml_key(key: Any) -> str:
    key = str(key)
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def toml_value(value: Any) -> str:
    """A TOML value on one line: strings with JSON escapes, tables inline, nulls left out."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else json.dumps(str(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, Mapping):
        items = [f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    return json.dumps(str(value), ensure_ascii=False)  # dates and the like
