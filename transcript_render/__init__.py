"""HTML rendering of parsed transcripts with Jinja2 and Pygments. Plain Python, no Django.

`render_transcript` makes the document and the Content-Security-Policy it needs (the page sends
the policy as a header); `export_html` makes the same document as one offline file.
`write_transcript` and `export_to` write either to a file or stream piece by piece, so the whole
page is never one string in memory.
"""

from transcript_render.document import (
    RenderedTranscript,
    render_transcript,
    renderer_version,
    transcript_policy,
    write_transcript,
)
from transcript_render.export import export_html, export_to
from transcript_render.view import RunContext

__all__ = [
    "RenderedTranscript",
    "RunContext",
    "export_html",
    "export_to",
    "render_transcript",
    "renderer_version",
    "transcript_policy",
    "write_transcript",
]
