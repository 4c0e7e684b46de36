"""Server-side syntax highlighting (Pygments escapes every token it emits).

Each function returns HTML that is safe to mark safe: the only text in it is Pygments' escaped
rendering of the input. Inputs past a size cap are not highlighted but escaped as plain text,
because lexing megabytes of one tool output would cost more than the whole page.
"""

from __future__ import annotations

import json
import re
from typing import Any

from markupsafe import Markup
from pygments import highlight
from pygments.formatter import Formatter
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import (
    CppLexer,
    CudaLexer,
    DiffLexer,
    JsonLexer,
    PythonLexer,
    TextLexer,
    get_lexer_by_name,
)
from pygments.token import (
    STANDARD_TYPES,
    _TokenType,
)
from pygments.util import ClassNotFound

MAX_HIGHLIGHT_CHARS = 400_000
# Per block in a transcript: thousands of blocks share one page's time budget.
MAX_BLOCK_HIGHLIGHT_CHARS = 60_000

_BLOCK_FORMATTER = HtmlFormatter(cssclass="hl", nowrap=False)
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})  # element content only


class _SpanFormatter(Formatter):  # type: ignore[misc]
    """Pygments tokens as `<span class="...">` with the standard short class names.

    The same markup and classes as HtmlFormatter(cssclass="hl"), minus its per-line machinery,
    which costs a page of ten thousand blocks more than a second. Every token is escaped.
    """

    def __init__(self) -> None:
        super().__init__()
        self._classes: dict[_TokenType, str] = {}

    def _css_class(self, ttype: _TokenType) -> str:
        found = self._classes.get(ttype)
        if found is None:
            kind = ttype
            while kind not in STANDARD_TYPES:
                kind = kind.parent
            found = self._classes[ttype] = STANDARD_TYPES[kind]
        return found

    def format(self, tokensource: Any, outfile: Any) -> None:
        parts = ['<div class="hl"><pre>']
        last_class, run = "", list[str]()
        for ttype, value in tokensource:
            css = self._css_class(ttype)
            if css != last_class and run:
                parts.append(_span(last_class, "".join(run)))
                run = []
            last_class = css
            run.append(value)
        if run:
            parts.append(_span(last_class, "".join(run)))
        parts.append("</pre></div>")
        outfile.write("".join(parts))


def _span(css: str, text: str) -> str:
    escaped = text.translate(_ESCAPES)
    return f'<span class="{css}">{escaped}</span>' if css else escaped


_SPANS = _SpanFormatter()
_EXTENSIONS: dict[str, type[Lexer]] = {
    ".py": PythonLexer,
    ".cu": CudaLexer,
    ".cuh": CudaLexer,
    ".cpp": CppLexer,
    ".cc": CppLexer,
    ".h": CppLexer,
    ".hpp": CppLexer,
    ".json": JsonLexer,
}


def python_to_html(source: str) -> str:
    # Pygments escapes every token it emits; the result is safe to mark safe in a template.
    formatter = HtmlFormatter(linenos="table", cssclass="highlight", wrapcode=True)
    return str(highlight(source[:MAX_HIGHLIGHT_CHARS], PythonLexer(), formatter))


def block_css() -> str:
    """The style rules for blocks made by the functions below (class `hl`)."""
    return str(_BLOCK_FORMATTER.get_style_defs(".hl"))


def _block(source: str, lexer: Lexer) -> Markup:
    if len(source) > MAX_BLOCK_HIGHLIGHT_CHARS:
        return Markup('<div class="hl"><pre>%s</pre></div>') % source
    return Markup(highlight(source, lexer, _SPANS))  # noqa: S704 (every token is escaped)


def json_to_html(value: Any) -> Markup:
    """Pretty JSON of a parsed value; a string that is not JSON is shown as text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return _block(value, TextLexer())
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_BLOCK_HIGHLIGHT_CHARS:
        return _block(text, JsonLexer())
    # JsonLexer walks every character in Python; the value's own structure gives the same
    # classes at a fraction of the cost, and tool arguments are most of a transcript's JSON.
    parts = ['<div class="hl"><pre>']
    _json_html(value, 0, parts)
    parts.append("</pre></div>")
    return Markup("".join(parts))  # noqa: S704 (every string is escaped)


def _json_html(value: Any, depth: int, parts: list[str]) -> None:
    """Pretty JSON (indent 2) as spans of JsonLexer's classes, appended to `parts`."""
    if isinstance(value, dict) and value:
        inner = "\n" + "  " * (depth + 1)
        parts.append('<span class="p">{</span>')
        for i, (key, item) in enumerate(value.items()):
            parts.append(f'<span class="p">,</span>{inner}' if i else inner)
            name = json.dumps(str(key), ensure_ascii=False).translate(_ESCAPES)
            parts.append(f'<span class="nt">{name}</span><span class="p">: </span>')
            _json_html(item, depth + 1, parts)
        parts.append("\n" + "  " * depth + '<span class="p">}</span>')
    elif isinstance(value, list) and value:
        inner = "\n" + "  " * (depth + 1)
        parts.append('<span class="p">[</span>')
        for i, item in enumerate(value):
            parts.append(f'<span class="p">,</span>{inner}' if i else inner)
            _json_html(item, depth + 1, parts)
        parts.append("\n" + "  " * depth + '<span class="p">]</span>')
    elif isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False).translate(_ESCAPES)
        parts.append(f'<span class="s2">{text}</span>')
    elif value is None or isinstance(value, bool):
        parts.append(f'<span class="kc">{json.dumps(value)}</span>')
    elif isinstance(value, int | float):
        parts.append(f'<span class="m">{json.dumps(value)}</span>')
    else:
        text = json.dumps(value, ensure_ascii=False, default=str).translate(_ESCAPES)
        parts.append(f'<span class="p">{text}</span>')


def diff_to_html(diff: str) -> Markup:
    """A unified diff, each line in the class Pygments' DiffLexer gives it (a test holds them
    equal), built a line at a time: a fraction of the cost of the lexer's regular expressions."""
    if len(diff) > MAX_BLOCK_HIGHLIGHT_CHARS:
        return _block(diff, DiffLexer())
    # As Lexer.get_tokens prepares text: newlines made \n, outer ones stripped, one at the end.
    text = diff.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    parts = ['<div class="hl"><pre>']
    for line in text.strip("\n").split("\n"):
        css = diff_line_class(line)
        escaped = line.translate(_ESCAPES)
        parts.append(f'<span class="{css}">{escaped}</span>\n' if css else escaped + "\n")
    parts.append("</pre></div>")
    return Markup("".join(parts))  # noqa: S704 (every line is escaped)


_DIFF_SUBHEADING = re.compile(r"@.*|\d(?:,\d+)*(?:a|c|d)\d+(?:,\d+)*")


def diff_line_class(line: str) -> str:
    """The CSS class of a diff line's text, by DiffLexer's rules in its order ("" for text)."""
    if line.startswith(" ") or not line:
        return ""
    if line.startswith("!") or line == "---":
        return "gs"
    if line.startswith(("< ", "-")):
        return "gd"
    if line.startswith(("> ", "+")):
        return "gi"
    if _DIFF_SUBHEADING.fullmatch(line):
        return "gu"
    if line.startswith(("Index", "index", "diff", "=")):
        return "gh"
    return ""


def code_to_html(source: str, *, filename: str = "") -> Markup:
    """Source code coloured by its file name's extension (Python when unknown)."""
    suffix = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    return _block(source, _EXTENSIONS.get(suffix, PythonLexer)())


_LANGUAGE = re.compile(r"[a-z0-9_+#.\-]{1,32}")
_FENCE_LEXERS: dict[str, Lexer | None] = {}


def _fence_lexer(language: str) -> Lexer | None:
    """The lexer for a code fence's language name, or None; at most 200 names are remembered
    (the names come from the log)."""
    name = language.lower()
    if name not in _FENCE_LEXERS:
        lexer = None
        if _LANGUAGE.fullmatch(name):
            try:
                lexer = get_lexer_by_name(name)
            except ClassNotFound:
                lexer = None
        if len(_FENCE_LEXERS) >= 200:
            return lexer
        _FENCE_LEXERS[name] = lexer
    return _FENCE_LEXERS[name]


def fenced_code_to_html(source: str, language: str) -> Markup:
    """A Markdown code fence: highlighted when its language is known, else escaped text."""
    lexer = _fence_lexer(language) if language else None
    if lexer is None:
        return Markup('<div class="hl"><pre>%s</pre></div>') % source
    return _block(source, lexer)


def text_to_html(text: str) -> Markup:
    return Markup('<pre class="plain">%s</pre>') % text


__all__ = [
    "block_css",
    "code_to_html",
    "diff_to_html",
    "fenced_code_to_html",
    "json_to_html",
    "python_to_html",
    "text_to_html",
]
