"""A Claude Code subagent's file read without the session that spawned it (every record a
sidechain): it is shown as a transcript of its own, said to be one subagent's."""

from __future__ import annotations

import json
import posixpath

from .records import JSON_ERRORS, SourceFile
from .schema import Transcript


def lone_subagent_title(transcript: Transcript, files: list[SourceFile]) -> str:
    """The title of the lone subagent's thread; a note says what the reader is looking at."""
    agent = _agent_id(files)
    title = f"Subagent {agent}" if agent else "Subagent"
    transcript.notes.append(
        f"{title}: one subagent's conversation, uploaded without the session that spawned it "
        "(upload the session's folder as a .zip to see it in place)."
    )
    return title


def _agent_id(files: list[SourceFile]) -> str | None:
    for source in files:
        base = posixpath.basename(source.name)
        if base.startswith("agent-") and base.endswith(".jsonl"):
            return base[len("agent-") : -len(".jsonl")]
        for _, line in source.lines(max_bytes=65_536):
            try:
                record = json.loads(line)
            except JSON_ERRORS:
                continue
            agent = record.get("agentId") if isinstance(record, dict) else None
            if isinstance(agent, str) and agent:
                return agent[:64]
            break
    return None
