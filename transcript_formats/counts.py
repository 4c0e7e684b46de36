"""The counts every reader's transcript is summed by, one meaning each (docs/transcripts.md,
"What is counted"): the page's cards and outline, `inspect`, the stored trajectory and the API
read them from here.

- A turn is one Turn of a thread's path: one model call, or the prompt that opens an exchange.
  A run's turns are its main conversation's and its subagents' (an abandoned branch's are not
  counted). Beside the main conversation (the page's card and outline) its own turns are given,
  the subagents' apart ("10 +2 in subagents"); `inspect`, the stored trajectory and the API give
  the run's total.
- A tool call is one tool the model asked to run: a tool_call event, on any thread, whether the
  message that asked for it also carries text or other calls.
- A file change is one file a file tool wrote or edited: a file_change event. Every reader
  places one for each (call_changes fills in what a log records no diff for), so Gemini CLI's
  write_file counts as Claude Code's Write does; a shell command's writes are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schema import EventKind, Transcript


@dataclass(frozen=True, slots=True)
class Counts:
    main_turns: int  # the main conversation's path: the outline's lines
    subagent_turns: int
    tool_calls: int
    file_changes: int
    subagents: int
    events: int
    errors: int

    @property
    def turns(self) -> int:
        """The run's turns: the main conversation's and its subagents'."""
        return self.main_turns + self.subagent_turns


def transcript_counts(transcript: Transcript) -> Counts:
    events = transcript.events()
    threads = transcript.threads
    return Counts(
        main_turns=len(threads[0].turns) if threads else 0,
        subagent_turns=sum(len(t.turns) for t in threads[1:]),
        tool_calls=sum(e.kind == EventKind.TOOL_CALL for e in events),
        file_changes=sum(e.kind == EventKind.FILE_CHANGE for e in events),
        subagents=sum(1 for t in threads if t.kind == "subagent"),
        events=len(events),
        errors=sum(e.is_error for e in events),
    )
