"""Terminal output with ANSI escape codes, as HTML: colours become classes, the rest is dropped.

Tool output (a test run, a compiler, `ls --color`) carries SGR codes (`ESC[1;31m`); a page
showing them raw is unreadable. Colours and weights map to a fixed set of classes (`a-f1` ...
`a-f15`, `a-b1` ... `a-b15`, `a-bold`, `a-dim`, `a-it`, `a-ul`) styled by our stylesheet: the
page's policy forbids inline styles, and a class name here is always one of ours, never a
value from the log. Every other escape sequence (cursor moves, titles, OSC 8 hyperlinks,
bracketed paste) is removed, keeping the text it wraps. Text is escaped before markup is added.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

# CSI (ESC [ params final), OSC (ESC ] ... BEL or ESC \), other two-byte escapes, lone ESC.
_ESCAPES = re.compile(
    r"\x1b\[([0-9;:?<=>]*)[ -/]*([@-~])"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-9;]*[@-~]"
)
# Control characters other than tab, newline and carriage return show as nothing useful.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class _Style:
    __slots__ = ("bg", "bold", "dim", "fg", "italic", "underline")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.fg: int | None = None
        self.bg: int | None = None
        self.bold = self.dim = self.italic = self.underline = False

    def classes(self) -> str:
        names = []
        if self.fg is not None:
            names.append(f"a-f{self.fg}")
        if self.bg is not None:
            names.append(f"a-b{self.bg}")
        for flag, name in (
            (self.bold, "a-bold"),
            (self.dim, "a-dim"),
            (self.italic, "a-it"),
            (self.underline, "a-ul"),
        ):
            if flag:
                names.append(name)
        return " ".join(names)

    def apply(self, params: str) -> None:
        codes = [int(p) if p.isdigit() else 0 for p in params.replace(":", ";").split(";")]
        i = 0
        while i < len(codes):
            i = self._apply_one(codes, i)

    def _apply_one(self, codes: list[int], i: int) -> int:
        code = codes[i]
        if code in (38, 48):  # extended colour: 5;n (256 colours) or 2;r;g;b
            colour, used = _extended(codes[i + 1 :])
            if code == 38:
                self.fg = colour
            else:
                self.bg = colour
            return i + 1 + used
        if code == 0:
            self.reset()
        elif 30 <= code <= 37 or 90 <= code <= 97:
            self.fg = code - 30 if code < 90 else code - 82
        elif 40 <= code <= 47 or 100 <= code <= 107:
            self.bg = code - 40 if code < 100 else code - 92
        elif code == 39:
            self.fg = None
        elif code == 49:
            self.bg = None
        else:
            self._attribute(code)
        return i + 1

    def _attribute(self, code: int) -> None:
        if code == 1:
            self.bold = True
        elif code == 2:
            self.dim = True
        elif code == 3:
            self.italic = True
        elif code == 4:
            self.underline = True
        elif code == 22:
            self.bold = self.dim = False
        elif code == 23:
            self.italic = False
        elif code == 24:
            self.underline = False


def _extended(rest: list[int]) -> tuple[int | None, int]:
    """The nearest of the 16 basic colours for `5;n` or `2;r;g;b`, and how many codes it used."""
    if rest[:1] == [5] and len(rest) >= 2:
        n = rest[1]
        return (n if 0 <= n < 16 else _cube_to_basic(n)), 2
    if rest[:1] == [2] and len(rest) >= 4:
        return _rgb_to_basic(*rest[1:4]), 4
    return None, len(rest[:1])


def _cube_to_basic(n: int) -> int | None:
    if 16 <= n <= 231:
        n -= 16
        return _rgb_to_basic((n // 36) * 51, (n // 6 % 6) * 51, (n % 6) * 51)
    if 232 <= n <= 255:
        level = (n - 232) * 10 + 8
        return _rgb_to_basic(level, level, level)
    return None


def _rgb_to_basic(red: int, green: int, blue: int) -> int:
    bright = max(red, green, blue) > 191
    bits = (red > 95) | (green > 95) << 1 | (blue > 95) << 2
    if bits == 0 and max(red, green, blue) > 63:
        return 8  # dark grey
    return bits + (8 if bright and bits else 0)


def has_escapes(text: str) -> bool:
    return "\x1b" in text or "\x9b" in text


def strip_ansi(text: str) -> str:
    """The text with every escape sequence and stray control character removed."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def ansi_to_html(text: str) -> Markup:
    """Escaped text with SGR colours as `<span class="a-...">`; other escapes removed."""
    style = _Style()
    parts: list[str] = []
    position = 0
    open_span = False
    for match in _ESCAPES.finditer(text):
        parts.append(_plain(text[position : match.start()]))
        position = match.end()
        if match.group(2) != "m":
            continue  # not a colour: dropped
        style.apply(match.group(1) or "0")
        if open_span:
            parts.append("</span>")
            open_span = False
        classes = style.classes()
        if classes:
            parts.append(f'<span class="{classes}">')
            open_span = True
    parts.append(_plain(text[position:]))
    if open_span:
        parts.append("</span>")
    return Markup("".join(parts))  # noqa: S704 (text escaped; classes are our fixed names)


def _plain(text: str) -> str:
    return str(escape(_CONTROLS.sub("", text)))
