"""How an event's text is drawn on one page: Markdown prose, Claude Code's command tags,
terminal output with ANSI codes, and images, each within the page's budgets.

One `PageContent` serves one rendering of one page: the Markdown and image budgets are spent
as the page is written, so a hostile log cannot make a page cost more than they allow.
Everything returned is escaped text with our own markup around it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from markupsafe import Markup

from transcript_formats.schema import Image
from transcript_render.ansi import ansi_to_html, has_escapes
from transcript_render.commands import Part, command_parts, has_command_tags
from transcript_render.images import ImageBudget
from transcript_render.markdown import MAX_MARKDOWN_CHARS, markdown_to_html

# Markdown is linear but up to ~15 us a character on hostile input (plain prose ~2 us): past
# this many characters in one page, prose is shown as plain text.
MAX_PAGE_MARKDOWN_CHARS = 2_000_000
# The text the readers leave where a message had an image (records.as_text).
_IMAGE_MARK = re.compile(r"^\[image\](?:\n|$)", re.M)


class PageContent:
    def __init__(self, *, markdown_chars: int = MAX_PAGE_MARKDOWN_CHARS) -> None:
        self.images = ImageBudget()
        self.markdown_left = markdown_chars

    def prose(self, text: str) -> Markup:
        """User or assistant text as Markdown, or as plain text past the budgets."""
        if len(text) > MAX_MARKDOWN_CHARS or len(text) > self.markdown_left:
            return Markup('<pre class="txt prose">%s</pre>') % text
        self.markdown_left -= len(text)
        return markdown_to_html(text)

    def message(self, text: str) -> Markup:
        """A user message: command tags as commands and their output, the rest as prose."""
        if not has_command_tags(text):
            return self.prose(text)
        return Markup("").join(self._part(part) for part in command_parts(text))

    def _part(self, part: Part) -> Markup:
        if part.kind == "text":
            return self.prose(part.text)
        if part.kind in ("command", "shell"):
            prompt = "!" if part.kind == "shell" else ""
            return Markup('<div class="cmd"><code>%s%s</code></div>') % (prompt, part.text)
        if part.kind == "caveat":
            return Markup('<p class="notice">%s</p>') % part.text
        if part.kind == "reminder":
            return Markup(
                '<details class="fold"><summary>System reminder &middot; %s characters</summary>'
                '<template class="lazy"><pre class="txt">%s</pre></template></details>'
            ) % (f"{len(part.text):,}", part.text)
        css = "txt out err" if part.kind == "stderr" else "txt out"
        return Markup('<pre class="%s">%s</pre>') % (css, self.output(part.text))

    def output(self, text: str) -> Markup | str:
        """Tool or command output: ANSI colours as classes; plain text is left for escaping."""
        return ansi_to_html(text) if has_escapes(text) else text

    def pictures(self, images: Iterable[Image]) -> Markup:
        return self.images.html(images)


def without_image_marks(text: str) -> str:
    """The text with the `[image]` lines the readers put where an image was (it is shown)."""
    return _IMAGE_MARK.sub("", text) if "[image]" in text else text


def is_command(text: str) -> bool:
    """True when a user message is only Claude Code command tags (no prose of the user's)."""
    if not has_command_tags(text):
        return False
    return all(part.kind != "text" for part in command_parts(text))
