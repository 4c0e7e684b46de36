"""Reads of the transcripts app: a stored trajectory back as a Transcript."""

from __future__ import annotations

import gzip
import json

from transcript_formats.schema import Transcript
from transcripts.models import Trajectory


def trajectory_transcript(*, trajectory: Trajectory) -> Transcript:
    """The normalized transcript stored beside the raw log (already redacted)."""
    with trajectory.normalized.open("rb") as stored:
        document = json.loads(gzip.decompress(stored.read()))
    return Transcript.from_dict(document)
