"""Parsers of agent logs into one schema (Run -> Thread -> Turn -> Event). Plain Python.

parse_path("session.jsonl")          # a file, or a folder with its subagent files
parse_bytes(data, "upload.zip")      # an upload: a file, a .gz or a zipped folder
detect_format("rollout.jsonl")       # "codex-rollout"

Each takes `limits=ArchiveLimits(...)`: what a file, a folder or an archive may hold once
expanded (ArchiveError, a TranscriptFormatError, past them; see archives.py).
"""

from __future__ import annotations

import io
from pathlib import Path

from .archives import DEFAULT_LIMITS, ArchiveError, ArchiveLimits, unpack
from .detect import detect_files, parse_files, read_path
from .errors import TranscriptFormatError
from .schema import Event, EventKind, MalformedLine, Thread, Transcript, Turn, Usage

__all__ = [
    "ArchiveError",
    "ArchiveLimits",
    "Event",
    "EventKind",
    "MalformedLine",
    "Thread",
    "Transcript",
    "TranscriptFormatError",
    "Turn",
    "Usage",
    "detect_format",
    "parse_bytes",
    "parse_path",
]


def parse_path(path: str | Path, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> Transcript:
    """Parse a log file or folder; raises TranscriptFormatError naming the file if unknown."""
    return parse_files(read_path(path, limits=limits), str(path))


def parse_bytes(data: bytes, name: str, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> Transcript:
    """Parse an uploaded log (`name` is its file name, used in messages and to spot .zip/.gz)."""
    return parse_files(unpack(io.BytesIO(data), name=name, limits=limits).files, name)


def detect_format(path: str | Path, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> str:
    return detect_files(read_path(path, limits=limits), str(path))[0]
