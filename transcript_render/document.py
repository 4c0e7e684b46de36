"""Render a parsed transcript into one HTML document (the page and the export share it)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Protocol
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from transcript_formats.schema import Transcript
from transcript_render import highlight
from transcript_render.content import PageContent, is_command, without_image_marks
from transcript_render.csp import policy
from transcript_render.timing import IDLE_AFTER_S
from transcript_render.view import (
    FILTER_KINDS,
    MAX_DEPTH,
    OutlineEntry,
    RunContext,
    TranscriptView,
    TurnView,
    arguments_preview,
    build_view,
    diff_stats,
    first_prompt,
    outline,
    result_preview,
)

# Entities keep the template ASCII, so that a page of ASCII logs is a 1-byte-per-character str.
DASH = Markup("&mdash;")
# The first chunk of turns is live DOM; later chunks stay inert until scrolled near.
CHUNK_EVENTS = 150
# The same for the outline's entries, one per turn of the main thread.
OUTLINE_CHUNK_TURNS = 200


class SupportsWrite(Protocol):
    def write(self, text: str, /) -> object: ...


@dataclass
class RenderedTranscript:
    html: str
    csp: str  # the policy the document needs; the page sends it as a header


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("transcript_render", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
    )
    env.filters.update(
        num=_number,
        anchor=_anchor,
        duration=_duration,
        preview=result_preview,
        args_preview=arguments_preview,
        diff_stats=diff_stats,
        is_command=is_command,
        without_image_marks=without_image_marks,
        json_html=highlight.json_to_html,
        diff_html=highlight.diff_to_html,
        code_html=lambda source, name: highlight.code_to_html(source, filename=name),
    )
    return env


@cache
def _assets() -> tuple[str, str]:
    folder = resources.files("transcript_render") / "assets"
    css = (folder / "transcript.css").read_text("utf-8") + "\n" + highlight.block_css()
    js = (folder / "transcript.js").read_text("utf-8")
    return css, js


@cache
def renderer_version() -> str:
    """A digest of everything that shapes a rendered page: this package's code, template, assets
    and the Pygments and markdown-it-py releases. A cached page keyed by it is dropped by any
    change to them."""
    import markdown_it
    import pygments

    digest = hashlib.sha256(f"{pygments.__version__} {markdown_it.__version__}".encode())
    root = resources.files("transcript_render")
    for folder in (root, root / "templates", root / "assets"):
        for item in sorted(folder.iterdir(), key=lambda entry: entry.name):
            if item.is_file() and item.name.endswith((".py", ".html", ".css", ".js")):
                digest.update(item.name.encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()[:16]


def transcript_policy() -> str:
    """The CSP header for any transcript document (the page or a served export)."""
    css, js = _assets()
    return policy(script=js, style=css)


def _policy(*, standalone: bool) -> str:
    css, js = _assets()
    return policy(script=js, style=css, in_meta=standalone)


def render_transcript(
    transcript: Transcript,
    *,
    context: RunContext | None = None,
    title: str | None = None,
    standalone: bool = False,
) -> RenderedTranscript:
    """The document, and the CSP it must be served with.

    `standalone` puts the policy into a <meta> element as well, for a file opened from disk.
    """
    csp = _policy(standalone=standalone)
    pieces = transcript_pieces(transcript, context=context, title=title, standalone=standalone)
    return RenderedTranscript(html="".join(pieces), csp=csp)


def write_transcript(
    out: SupportsWrite,
    transcript: Transcript,
    *,
    context: RunContext | None = None,
    title: str | None = None,
    standalone: bool = False,
) -> str:
    """Write the document to `out` piece by piece; returns the CSP it must be served with.

    The whole page never exists as one string, so a file or a gzip stream costs the transcript
    plus one turn's HTML in memory, where a string costs the page twice (its pieces and the join).
    """
    for piece in transcript_pieces(transcript, context=context, title=title, standalone=standalone):
        out.write(piece)
    return _policy(standalone=standalone)


def transcript_pieces(
    transcript: Transcript,
    *,
    context: RunContext | None = None,
    title: str | None = None,
    standalone: bool = False,
) -> Iterator[str]:
    """The document in pieces of about one turn each."""
    css, js = _assets()
    view = build_view(transcript)
    label = title or _default_title(transcript, context)
    prompt = first_prompt(transcript)
    return (
        _environment()
        .get_template("transcript.html")
        .generate(
            view=view,
            ctx=context or RunContext(),
            heading=prompt or label,
            subtitle=label if prompt else None,
            content=PageContent(),
            idle_after=_duration(IDLE_AFTER_S),
            models=_models(view),
            chunks=_chunks(view),
            outline_chunks=_outline_chunks(view),
            css=Markup(css),  # noqa: S704 (our own stylesheet, not log data)
            js=Markup(js),  # noqa: S704 (our own script, not log data)
            csp=_policy(standalone=standalone),
            csp_meta=standalone,
            max_depth=MAX_DEPTH,
            kind_labels=FILTER_KINDS,
            dash=DASH,
        )
    )


def _default_title(transcript: Transcript, context: RunContext | None) -> str:
    if context and (context.agent or context.task):
        return f"{context.agent or 'agent'} on {context.task or 'a task'}"
    return f"Transcript ({transcript.format})"


def _models(view: TranscriptView) -> str:
    names = [view.transcript.model] if view.transcript.model else []
    for thread in view.transcript.threads:
        for turn in thread.turns:
            if turn.model and turn.model not in names:
                names.append(turn.model)
    return ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")


def _chunks(view: TranscriptView) -> list[list[TurnView]]:
    if view.main is None:
        return []
    chunks: list[list[TurnView]] = [[]]
    size = 0
    for turn in view.main.turns:
        if size >= CHUNK_EVENTS:
            chunks.append([])
            size = 0
        chunks[-1].append(turn)
        size += len(turn.events)
    return chunks


def _outline_chunks(view: TranscriptView) -> list[list[OutlineEntry]]:
    if view.main is None or len(view.main.turns) < 2:
        return []
    entries = outline(view.main)
    return [
        entries[i : i + OUTLINE_CHUNK_TURNS] for i in range(0, len(entries), OUTLINE_CHUNK_TURNS)
    ]


_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:\-]*")


def _anchor(event_id: str) -> str:
    """The id as a URL fragment; most parsers' ids need no quoting, and quoting costs."""
    return event_id if _PLAIN_ID.fullmatch(event_id) else quote(event_id, safe="")


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{seconds:.1f} s"
