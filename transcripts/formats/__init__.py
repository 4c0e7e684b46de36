"""Parsers of agent logs into one schema (Run -> Thread -> Turn -> Event). Plain Python.

parse_path("session.jsonl")          # a file, or a folder with its subagent files
parse_bytes(data, "upload.zip")      # an upload: a file, a .gz or a zipped folder
detect_format("rollout.jsonl")       # "codex-rollout"
"""

from __future__ import annotations

from pathlib import Path

from .detect import detect_files, expand, parse_files, read_path
from .errors import TranscriptFormatError
from .schema import Event, EventKind, MalformedLine, Thread, Transcript, Turn, Usage

__all__ = [
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


def parse_path(path: str | Path) -> Transcript:
    """Parse a log file or folder; raises TranscriptFormatError naming the file if unknown."""
    return parse_files(read_path(path), str(path))


def parse_bytes(data: bytes, name: str) -> Transcript:
    """Parse an uploaded log (`name` is its file name, used in messages and to spot .zip/.gz)."""
    return parse_files(expand(data, name), name)


def detect_format(path: str | Path) -> str:
    return detect_files(read_path(path), str(path))[0]
