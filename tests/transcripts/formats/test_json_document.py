"""A log that is one JSON document, read a block at a time: what json.loads gives, or refused
as json.loads refuses it, however the blocks fall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from transcript_formats import json_document
from transcript_formats.json_document import StreamedArray, load_document
from transcript_formats.records import SourceFile

FIXTURES = Path(__file__).parent / "fixtures"
DOCUMENTS = [
    b"[]",
    b" [ ] \n",
    b"{}",
    b'{"a": 1, "b": [1, 2, {"c": "]}\\"[{,:"}], "d": "x\\\\", "e": 12345678901234567890}',
    b'[1, "two", null, true, [3], {"k": [4]}, -1.5e10, "\\u00e9\\ud83d\\ude00"]\n',
    b'{"a": [], "a": [1]}',
    b'  {"m" : [ {"x" : 1} , 2 ] , "n": "\xc3\xa9\xe2\x82\xac", "o": {"p": [[]]}}  ',
    b"123456789",
    b'"a string alone"',
]
REFUSED = [
    b"[1,]",
    b"[,1]",
    b'{"a" 1}',
    b'{"a":1,}',
    b"[1 2]",
    b"[1]]",
    b'{"a":"x}',
    b"[",
    b'{"a",1}',
    b"[1] [2]",
    b"{1: 2}",
    b"[1, tru]",
    b'{"a": [1, 2}',
]


def plain(value):
    if isinstance(value, StreamedArray):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def read(data: bytes, tmp_path: Path, least: int = 1):
    path = tmp_path / "log.json"
    path.write_bytes(data)
    return load_document(SourceFile.on_disk(path.name, path), stream_min_bytes=least)


@pytest.fixture(params=[1, 3, 7, 1 << 20], ids=lambda size: f"blocks-of-{size}")
def block(request, monkeypatch):
    monkeypatch.setattr(json_document, "READ_BYTES", request.param)


@pytest.mark.parametrize("data", DOCUMENTS)
def test_a_document_read_in_blocks_is_what_json_loads_gives(data, tmp_path, block):
    assert plain(read(data, tmp_path)) == json.loads(data)


@pytest.mark.parametrize("data", REFUSED)
def test_a_document_json_refuses_is_refused(data, tmp_path, block):
    with pytest.raises(ValueError):
        json.loads(data)
    with pytest.raises(ValueError):
        plain(read(data, tmp_path))


@pytest.mark.parametrize("log", sorted(FIXTURES.rglob("*.json")), ids=lambda p: p.name)
def test_every_document_log_reads_the_same_streamed(log, tmp_path, block):
    assert plain(read(log.read_bytes(), tmp_path)) == json.loads(log.read_bytes())


def test_a_big_array_is_left_in_the_file_and_read_an_item_at_a_time(tmp_path):
    items = [{"role": "user", "content": "x" * 100, "n": n} for n in range(50)]
    data = json.dumps({"model": "m", "messages": items, "small": [1, 2]}).encode()
    document = read(data, tmp_path, least=1000)
    messages = document["messages"]
    assert isinstance(messages, StreamedArray) and list.__len__(messages) == 0
    assert len(messages) == 50 and messages and list(messages) == items
    assert document["small"] == [1, 2] and type(document["small"]) is list


def test_a_small_document_or_one_in_memory_is_decoded_whole(tmp_path):
    data = json.dumps({"messages": [{"role": "user"}]}).encode()
    path = tmp_path / "log.json"
    path.write_bytes(data)
    on_disk = load_document(SourceFile.on_disk("log.json", path))
    in_memory = load_document(SourceFile("log.json", data), stream_min_bytes=1)
    assert type(on_disk["messages"]) is list and type(in_memory["messages"]) is list
