"""Errors the parsers raise for input they cannot read at all."""

from __future__ import annotations


class TranscriptFormatError(ValueError):
    """The file (named in the message) is not a log in any format this package reads."""
