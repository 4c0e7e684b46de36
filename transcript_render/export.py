"""One self-contained HTML file of a transcript: CSS and JS inline, no request leaves it."""

from __future__ import annotations

from transcript_formats.schema import Transcript
from transcript_render.document import SupportsWrite, render_transcript, write_transcript
from transcript_render.view import RunContext


def export_html(
    transcript: Transcript, *, title: str | None = None, context: RunContext | None = None
) -> str:
    """The export: the page's document with its CSP in a <meta>, and no links back to a server."""
    offline = _offline(context)
    return render_transcript(transcript, context=offline, title=title, standalone=True).html


def export_to(
    out: SupportsWrite,
    transcript: Transcript,
    *,
    title: str | None = None,
    context: RunContext | None = None,
) -> None:
    """The same export written to a file or stream piece by piece (a fraction of the memory)."""
    write_transcript(out, transcript, context=_offline(context), title=title, standalone=True)


def _offline(context: RunContext | None) -> RunContext | None:
    """Links to the run page, the task and the download button only make sense on the site."""
    if context is None:
        return None
    return RunContext(
        agent=context.agent,
        task=context.task,
        run_status=context.run_status,
        verdict=context.verdict,
        verdict_tone=context.verdict_tone,
        reward=context.reward,
        solution=context.solution,
        solution_name=context.solution_name,
        grader_log=context.grader_log,
    )
