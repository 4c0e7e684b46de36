"""Checks that a reader survives hostile logs: script payloads in every field stay text on the
page, and a log cut, mangled or filled with fields of the wrong type is read or refused with a
TranscriptFormatError, never anything else. Shared by the Kimi, Grok and claude.ai tests."""

from __future__ import annotations

import io
import json
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

from tests.transcripts.render.injection import PAYLOADS
from tests.transcripts.render.test_render import elements
from transcript_formats import Transcript, TranscriptFormatError, parse_bytes
from transcript_render import export_html

from .test_hostile_records import _mutate

# The payloads an HTML parser would take for markup; the others are harmless as text.
TAG_PAYLOADS = [p for p in PAYLOADS if "<" in p]
JUNK_LINES = [b"{", b"[]", b"null", b'"text"', b"\xff\xfe\x00", b'{"a": ' + b"[" * 50_000]


def assert_payloads_stay_text(transcript: Transcript) -> None:
    """The exported page shows every payload as text: no payload's markup survives, no event
    handler or javascript: address appears, and the page's one script is its own."""
    html = export_html(transcript)
    found = elements(html)
    assert sum(tag == "script" for tag, _ in found.tags) == 1
    for tag, attrs in found.tags:
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        for name in ("href", "src", "action"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("javascript:", "http:", "https:", "//")), (tag, attrs)
    for payload in TAG_PAYLOADS:
        assert payload not in html, payload


def parse_or_refuse(data: bytes, name: str) -> Transcript | None:
    try:
        return parse_bytes(data, name)
    except TranscriptFormatError:
        return None


def mutated_lines(text: str, rng: random.Random) -> bytes:
    """Each JSON line with fields dropped or swapped for junk, a line cut short here and there,
    and junk lines put in."""
    out = []
    for line in text.splitlines():
        roll = rng.random()
        if roll < 0.05:
            out.append(rng.choice(JUNK_LINES))
            continue
        try:
            value = _mutate(json.loads(line), rng)
        except ValueError:
            out.append(line.encode())
            continue
        encoded = json.dumps(value).encode()
        out.append(encoded[: rng.randrange(len(encoded))] if roll < 0.1 else encoded)
    return b"\n".join(out) + b"\n"


def mutated_document(text: str, rng: random.Random) -> bytes:
    value = _mutate(json.loads(text), rng)
    encoded = json.dumps(value).encode()
    return encoded[: rng.randrange(len(encoded))] if rng.random() < 0.1 else encoded


def mutated_upload(path: Path, rng: random.Random) -> tuple[bytes, str]:
    """A fixture file, or a fixture folder zipped, with every member mangled."""
    if path.is_file():
        text = path.read_text()
        mutate = mutated_document if path.suffix == ".json" else mutated_lines
        return mutate(text, rng), path.name
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member in sorted(p for p in path.rglob("*") if p.is_file()):
            text = member.read_text()
            mutate = mutated_document if member.suffix == ".json" else mutated_lines
            archive.writestr(member.relative_to(path).as_posix(), mutate(text, rng))
    return buffer.getvalue(), f"{path.name}.zip"


def fuzz(path: Path, *, rounds: int, seed: int, check: Callable[[Transcript], None]) -> int:
    """Parse `rounds` mangled copies of a fixture; each is read (and passes `check`) or refused.
    Returns how many were read."""
    rng = random.Random(seed)
    read = 0
    for _ in range(rounds):
        data, name = mutated_upload(path, rng)
        transcript = parse_or_refuse(data, name)
        if transcript is None:
            continue
        read += 1
        assert all(bad.line >= 0 and bad.reason for bad in transcript.malformed)
        for field in (transcript.model, transcript.session_id, transcript.cwd):
            assert field is None or isinstance(field, str)
        json.dumps(transcript.to_dict(), default=str)  # storable
        check(transcript)
    return read
