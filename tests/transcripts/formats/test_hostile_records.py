"""Logs are hostile: records of any shape are read or reported, never a crash."""

from __future__ import annotations

import json
import random

from transcript_formats import TranscriptFormatError, parse_bytes

from .transcript_readers import FIXTURES

JUNK = [None, 0, -5, 1.5, "", "x", [], [1], {}, {"a": 1}, True, [None], [{"type": None}]]


def _mutate(value, rng: random.Random):
    """Replace or drop fields at random, at every depth."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            roll = rng.random()
            if roll < 0.15:
                out[key] = rng.choice(JUNK)
            elif roll < 0.2:
                continue
            else:
                out[key] = _mutate(item, rng)
        return out
    if isinstance(value, list):
        return [_mutate(item, rng) for item in value]
    return value


def _mutated_bytes(path, rng: random.Random) -> bytes:
    text = path.read_text()
    if path.suffix == ".json":
        return json.dumps(_mutate(json.loads(text), rng)).encode()
    lines = []
    for line in text.splitlines():
        try:
            lines.append(json.dumps(_mutate(json.loads(line), rng)))
        except ValueError:
            lines.append(line)
    return ("\n".join(lines) + "\n").encode()


def test_every_fixture_with_fields_of_the_wrong_type_parses_or_is_rejected_cleanly():
    rng = random.Random(2024)
    files = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".jsonl", ".json"))
    parsed = 0
    for _ in range(400):
        path = rng.choice(files)
        try:
            transcript = parse_bytes(_mutated_bytes(path, rng), path.name)
        except TranscriptFormatError:
            continue
        parsed += 1
        assert all(bad.line >= 0 and bad.reason for bad in transcript.malformed)
        for field in (transcript.model, transcript.session_id, transcript.cwd):
            assert field is None or isinstance(field, str)
    assert parsed > 300
