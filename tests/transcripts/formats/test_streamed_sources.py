"""Logs read from files on disk, as uploads are, give what the same logs in memory give: the
same transcript, the same redaction in chunks as whole, the same JSON in pieces as at once."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest

from bench.transcript_logs import write_claude_code_session, write_codex_rollout
from transcript_formats import claude_code, codex, disk_texts, json_document
from transcript_formats.archives import unpack, unpack_to
from transcript_formats.detect import parse_files, read_path
from transcript_formats.disk_texts import texts_on_disk
from transcript_formats.records import LineText, SourceFile, first_byte
from transcript_formats.redact import MARKER, redact_bytes, redact_chunks
from transcript_formats.schema import transcript_json_pieces
from transcript_formats.written_files import written_files

from .opencode_storage import export_document, write_storage

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = sorted(FIXTURES.iterdir())


def on_disk(files: list[SourceFile], folder: Path) -> list[SourceFile]:
    copies = []
    for number, source in enumerate(files):
        path = folder / str(number)
        path.write_bytes(source.data)
        copies.append(SourceFile.on_disk(source.name, path))
    return copies


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_every_format_reads_the_same_from_disk_as_from_memory(log, tmp_path):
    files = read_path(log)
    in_memory = parse_files(files, log.name)
    from_disk = parse_files(on_disk(files, tmp_path), log.name)
    assert from_disk.to_dict() == in_memory.to_dict()


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_the_transcript_as_json_pieces_is_the_transcript_as_json(log):
    transcript = parse_files(read_path(log), log.name)
    whole = json.dumps(transcript.to_dict(), ensure_ascii=False, default=str)
    pieces = list(transcript_json_pieces(transcript))
    assert "".join(pieces) == whole
    assert len(pieces) > sum(len(turn.events) for turn in transcript.main.turns)


def test_a_claude_code_session_on_disk_is_held_as_slim_records_and_read_again_to_build(
    tmp_path,
):
    folder = tmp_path / "session"
    expected = write_claude_code_session(
        folder / "s.jsonl", target_bytes=300_000, events=300, seed=3
    )
    files = [
        SourceFile.on_disk(p.relative_to(folder).as_posix(), p)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    ]
    records = claude_code._read([files[-1]], [])
    assert records and all(r.data is None and r.origin is files[-1] for r in records)
    assert records[0].full()["type"] == records[0].kind
    transcript = parse_files(files, "s.zip")
    assert transcript.usage().output_tokens == expected.output_tokens
    assert sum(1 for t in transcript.threads if t.kind == "subagent") == expected.subagents


def test_a_codex_rollout_on_disk_holds_long_outputs_as_lines_and_writes_the_same_json(tmp_path):
    path = tmp_path / "rollout.jsonl"
    write_codex_rollout(path, target_bytes=200_000, seed=5)
    in_memory = codex.parse([SourceFile("rollout.jsonl", path.read_bytes())])
    from_disk = codex.parse([SourceFile.on_disk("rollout.jsonl", path)])
    held = [e for e in from_disk.events() if isinstance(e.text, LineText)]
    assert held and all(e.kind == "tool_result" for e in held)
    assert not any(isinstance(e.text, LineText) for e in in_memory.events())
    text = next(e.text for e in in_memory.events() if e.id == held[0].id)
    assert held[0].text == text and len(held[0].text) == len(text) and text[:20] in held[0].text
    whole = json.dumps(in_memory.to_dict(), ensure_ascii=False, default=str)
    assert "".join(transcript_json_pieces(from_disk)) == whole


SECRETS = [
    b"sk-ant-api03-" + b"A1b2" * 8,
    b"ghp_" + b"a1B2" * 9,
    b"Authorization: Bearer\n  eyJhbGciOiJIUzI1NiJ9.payload",
    b'x-api-key:\n "k-1234567890abcdef"',
    b"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC==\n-----END RSA PRIVATE KEY-----",
    b"DB_PASSWORD=hunter2hunter",
    b"\\nAKIAIOSFODNN7EXAMPLE",
]
FILLER = [b"kernel ", b"\n", b"\\n", b'"', b" basic", b"Bearer", b"x" * 70, b"\n\n", b"tile"]


def test_redacting_in_chunks_gives_what_redacting_whole_gives_wherever_the_cuts_fall():
    rng = random.Random(5)
    for _ in range(2000):
        parts = [rng.choice(SECRETS) if rng.random() < 0.25 else rng.choice(FILLER)]
        parts += [rng.choice(SECRETS) if rng.random() < 0.25 else rng.choice(FILLER)]
        parts += [rng.choice(FILLER + SECRETS) for _ in range(rng.randint(0, 40))]
        data = b"".join(parts)
        size = rng.randint(1, 50)
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        streamed = b"".join(redact_chunks(chunks, block_bytes=rng.randint(1, 100)))
        assert streamed == redact_bytes(data), data


def test_a_secret_split_across_upload_chunks_is_redacted():
    key = b"sk-ant-api03-" + b"Z" * 40
    data = b"line one\n" * 1000 + b"the key " + key + b" here\n" + b"tail\n" * 10
    cut = data.index(key) + 10
    streamed = b"".join(redact_chunks([data[:cut], data[cut:]], block_bytes=64))
    assert key not in streamed and MARKER.encode() in streamed


def test_lines_on_disk_are_cut_where_asked_without_reading_the_rest(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"short\n" + b"y" * 5_000_000 + b"\nafter\nlast")
    source = SourceFile.on_disk("log.jsonl", path)
    assert [(n, len(line)) for n, line in source.lines(max_bytes=100)] == [
        (1, 5),
        (2, 100),
        (3, 5),
        (4, 4),
    ]
    memory = SourceFile("log.jsonl", path.read_bytes())
    assert list(source.lines()) == list(memory.lines())
    assert source.contains(b"yafter") is False and source.contains(b"y\nafter")
    assert first_byte(SourceFile("blank", b"\n \n\t{")) == b"{"


def test_unpacking_to_a_folder_gives_the_files_unpacking_in_memory_gives(tmp_path):
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("s.jsonl", b'{"a": 1}\n' * 1000)
        archive.writestr("s/subagents/agent-1.jsonl", b'{"b": "sk-' + b"x" * 30 + b'"}\n')
    data = buffer.getvalue()
    in_memory = unpack(io.BytesIO(data), name="s.zip")
    folder = tmp_path / "files"
    folder.mkdir()
    written = unpack_to(io.BytesIO(data), folder, name="s.zip", transform=redact_chunks)
    assert written.kind == "zip" == in_memory.kind
    assert [f.name for f in written.files] == [f.name for f in in_memory.files]
    assert [f.data for f in written.files] == [redact_bytes(f.data) for f in in_memory.files]
    assert sorted(p.name for p in folder.iterdir()) == ["0", "1"]


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_every_format_with_its_texts_on_disk_writes_the_same_json(log, tmp_path, monkeypatch):
    # Every text held on disk, and every JSON document read a value at a time.
    monkeypatch.setattr(disk_texts, "LONG_TEXT_MIN_CHARS", 1)
    monkeypatch.setattr(json_document, "STREAM_MIN_BYTES", 1)
    files = read_path(log)
    in_memory = parse_files(files, log.name)
    with texts_on_disk(tmp_path) as spill:
        from_disk = parse_files(on_disk(files, tmp_path), log.name)
    held = [e for e in from_disk.events() if isinstance(e.text, disk_texts.SpilledText)]
    assert held and spill.read(0, 1)
    assert "".join(transcript_json_pieces(from_disk)) == "".join(transcript_json_pieces(in_memory))
    assert list(written_files(from_disk)) == list(written_files(in_memory))


def test_an_opencode_export_with_its_texts_on_disk_writes_the_same_json(tmp_path, monkeypatch):
    monkeypatch.setattr(disk_texts, "LONG_TEXT_MIN_CHARS", 1)
    monkeypatch.setattr(json_document, "STREAM_MIN_BYTES", 1)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export_document()))
    in_memory = parse_files([SourceFile("export.json", path.read_bytes())], "export.json")
    with texts_on_disk(tmp_path):
        from_disk = parse_files([SourceFile.on_disk("export.json", path)], "export.json")
    assert from_disk.format == "opencode-export"
    assert "".join(transcript_json_pieces(from_disk)) == "".join(transcript_json_pieces(in_memory))
    assert list(written_files(from_disk)) == list(written_files(in_memory))


def test_an_opencode_folder_with_its_texts_on_disk_writes_the_same_json(tmp_path, monkeypatch):
    monkeypatch.setattr(disk_texts, "LONG_TEXT_MIN_CHARS", 1)
    storage = write_storage(tmp_path / "opencode")
    files = read_path(storage)
    in_memory = parse_files(files, "storage")
    copies = tmp_path / "copies"
    copies.mkdir()
    with texts_on_disk(tmp_path):
        from_disk = parse_files(on_disk(files, copies), "storage")
    assert from_disk.format == "opencode-storage"
    assert "".join(transcript_json_pieces(from_disk)) == "".join(transcript_json_pieces(in_memory))
    assert list(written_files(from_disk)) == list(written_files(in_memory))
