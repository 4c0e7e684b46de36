"""User and assistant text as Markdown, rendered so that no HTML from the log can pass.

markdown-it-py (CommonMark, plus tables and strikethrough) with `html` off: a tag or an entity
in the text is escaped like any other character, and the markup is built only from the
parser's own tokens. On top of that:

- links keep only `http:`, `https:` and `mailto:` targets (anything else stays text) and get
  `rel="nofollow noopener noreferrer"`; Markdown images are not rendered (a page that fetched
  them would call out; the policy would refuse it anyway) and read as links;
- headings drop two levels (`#` is an <h3>), below the page's own;
- fenced code is highlighted by Pygments on the server when its language is known;
- text past MAX_MARKDOWN_CHARS is shown as plain text, and text with nothing Markdown could
  act on takes a fast path that gives the same HTML without the parser (most of a long run's
  messages are plain sentences, and a 10,000-event page renders thousands of them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

from transcript_render.highlight import fenced_code_to_html

MAX_MARKDOWN_CHARS = 60_000
LINK_REL = "nofollow noopener noreferrer"
_SAFE_LINK = re.compile(r"(?:https?://|mailto:)", re.I)
# What could make Markdown differ from plain paragraphs: any markup character, a line that
# starts with a block marker or whitespace, tabs, control characters and Unicode spaces (which
# markdown-it trims). An underscore between two letters or digits (program_id) can neither
# open nor close emphasis.
_MARKUP = re.compile(
    r"[`*#\[\]<>|~\\&!\t\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\xa0"
    r"\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]"
    r"|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])"
    r"|^[ \-+=>]|^\d{1,9}[.)]",
    re.M,
)
_BLANK_LINES = re.compile(r"\n(?:[ ]*\n)+")


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    md.validateLink = _valid_link  # type: ignore[method-assign]
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _fence)
    return md


def _valid_link(url: str) -> bool:
    return bool(_SAFE_LINK.match(url.strip()))


def _fence(
    self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any
) -> str:  # pragma: no cover - signature fixed by markdown-it
    token = tokens[idx]
    language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    return str(fenced_code_to_html(token.content, language)) + "\n"


def markdown_to_html(text: str) -> Markup:
    """Markdown as HTML inside `<div class="md">`; every character of `text` is escaped."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return Markup('<pre class="txt">%s</pre>') % text
    if _MARKUP.search(text) is None:
        body = plain_paragraphs(text)
    else:
        md = _parser()
        tokens = md.parse(text)
        _adjust(tokens)
        body = md.renderer.render(tokens, md.options, {})
    return Markup(f'<div class="md">{body}</div>')  # noqa: S704 (built from escaped tokens)


def plain_paragraphs(text: str) -> str:
    """What markdown-it makes of text with no markup (see _MARKUP): paragraphs at blank lines,
    a line break at each newline, trailing spaces dropped."""
    out = []
    for block in _BLANK_LINES.split(text.strip("\n ")):
        lines = [line.rstrip(" ") for line in block.split("\n")]
        joined = "<br />\n".join(str(escape(line)).replace("&#34;", "&quot;") for line in lines)
        joined = joined.replace("&#39;", "'")
        if joined:
            out.append(f"<p>{joined}</p>\n")
    return "".join(out)


def _adjust(tokens: list[Token]) -> None:
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + 2)}"
        elif token.children:
            for child in token.children:
                if child.type == "link_open":
                    child.attrSet("rel", LINK_REL)


__all__ = ["LINK_REL", "MAX_MARKDOWN_CHARS", "markdown_to_html", "plain_paragraphs"]
