"""The record that declares one log format (registry.FORMATS lists them all)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .key_fields import Check
from .records import SourceFile
from .schema import Transcript

Parser = Callable[[list[SourceFile]], Transcript]
RecordsSniffer = Callable[[list[dict[str, Any]]], bool]
DocumentSniffer = Callable[[Any], bool]


@dataclass(frozen=True, slots=True)
class LogFormat:
    id: str  # what a Transcript's `format` says, stored with every trajectory
    name: str  # the writer, as a reader knows it ("Claude Code")
    parse: Parser
    # The arena harness an upload of this format is labelled with ("" for none: a chat list
    # names no CLI). An agent first seen in an upload takes it; a log of another harness is
    # refused under an agent tied to one.
    harness: str = ""
    records: tuple[tuple[int, RecordsSniffer], ...] = ()  # (rank, predicate over first records)
    document: tuple[tuple[int, DocumentSniffer], ...] = ()  # (rank, predicate over the document)
    key_fields: tuple[Check, ...] = ()  # beyond the checks every format passes
    # Where files of several formats come together (a folder, a .zip), this one is the log and
    # the others sit beside it by accident (Claude Code's subagent files); `.meta.json` files
    # beside it belong to it.
    claims_folder: bool = False
