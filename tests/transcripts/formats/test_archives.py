"""Archives expanded within caps: bombs, lying headers, unsafe names, and ordinary folders."""

from __future__ import annotations

import io
import stat
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from bench.archive_bombs import (
    gzip_bomb,
    with_declared_size,
    with_gzip_trailer_size,
    write_zip_bomb,
    zip_bomb,
)
from transcript_formats import ArchiveError, ArchiveLimits, parse_bytes, parse_path
from transcript_formats.archives import unpack

from .transcript_readers import FIXTURES

REPO = Path(__file__).resolve().parents[3]
SESSION = FIXTURES / "claude_code_2_1"


def zip_of(entries: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def session_zip() -> bytes:
    files = sorted(p for p in SESSION.rglob("*") if p.is_file())
    return zip_of({f"run/{p.relative_to(SESSION).as_posix()}": p.read_bytes() for p in files})


def refusal(data: bytes, name: str, **limits: int) -> ArchiveError:
    with pytest.raises(ArchiveError) as caught:
        unpack(io.BytesIO(data), name=name, limits=ArchiveLimits(**limits))
    return caught.value


def peak_traced_bytes(data: bytes, name: str, **limits: int) -> int:
    tracemalloc.start()
    try:
        refusal(data, name, **limits)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- bombs -------------------------------------------------------------------------------------


def test_a_zip_bomb_is_refused_naming_the_archive_the_entry_and_the_ratio():
    error = refusal(zip_bomb(expanded_bytes=50 << 20, member="a.jsonl"), "bomb.zip")
    assert str(error).startswith("bomb.zip: entry 'a.jsonl' says it expands to more than 100")
    assert "the limit on the expansion ratio" in str(error)
    assert error.too_large and error.archive == "bomb.zip" and error.member == "a.jsonl"


def test_a_zip_bomb_written_to_disk_is_refused_by_parse_path(tmp_path):
    path = tmp_path / "bomb.zip"
    write_zip_bomb(path, expanded_bytes=50 << 20, member="a.jsonl")
    with pytest.raises(ArchiveError, match=r"bomb\.zip: entry 'a\.jsonl'"):
        parse_path(path)


def test_a_gzip_bomb_is_refused_by_its_ratio_as_it_expands_holding_a_few_chunks():
    bomb = gzip_bomb(expanded_bytes=200 << 20)  # its header says nothing of its size
    error = refusal(bomb, "run.jsonl.gz")
    assert "run.jsonl.gz: entry 'run.jsonl' expands to more than 100 times" in str(error)
    assert peak_traced_bytes(bomb, "run.jsonl.gz") < 16 << 20


def test_a_high_ratio_entry_is_refused_even_under_every_byte_cap():
    data = zip_of({"logs/a.jsonl": b"\n" * (3 << 20)})  # ~1000x, far below 200 MiB
    error = refusal(data, "up.zip", max_ratio=100)
    assert "entry 'logs/a.jsonl'" in str(error) and "100 times its compressed size" in str(error)


def test_a_small_entry_may_expand_many_times_over():
    data = zip_of({"a.jsonl": b"\n" * 100_000})  # ~1000x, but only 100 kB
    assert unpack(io.BytesIO(data), name="ok.zip").files[0].data == b"\n" * 100_000


def test_the_cap_on_the_whole_archive_counts_every_entry():
    data = zip_of({"a.jsonl": b"x" * 60_000, "b.jsonl": b"y" * 60_000})
    error = refusal(data, "two.zip", max_total_bytes=100_000)
    assert "entry 'b.jsonl'" in str(error) and "100,000-byte limit on the whole archive" in str(
        error
    )


def test_the_cap_on_one_entry_is_its_own():
    data = zip_of({"a.jsonl": b"x" * 60_000})
    error = refusal(data, "one.zip", max_member_bytes=50_000)
    assert "entry 'a.jsonl'" in str(error) and "50,000-byte limit on one file" in str(error)


# -- headers that lie --------------------------------------------------------------------------


def test_a_zip_entry_whose_headers_understate_its_size_is_still_refused():
    lying = with_declared_size(zip_bomb(expanded_bytes=20 << 20, member="a.jsonl"), 1_000)
    error = refusal(lying, "lie.zip", max_total_bytes=100_000)
    assert str(error).startswith("lie.zip: entry 'a.jsonl'")
    assert peak_traced_bytes(lying, "lie.zip", max_total_bytes=100_000) < 16 << 20


def test_a_gzip_whose_trailer_understates_its_size_is_capped_as_it_expands():
    lying = with_gzip_trailer_size(gzip_bomb(expanded_bytes=20 << 20), 1_000)
    error = refusal(lying, "lie.jsonl.gz", max_total_bytes=100_000, max_ratio=10_000)
    assert "lie.jsonl.gz: entry 'lie.jsonl' expands past the 100,000-byte limit" in str(error)
    assert error.too_large


def test_a_zip_whose_end_record_understates_its_entries_is_refused_by_its_directory_size():
    data = bytearray(zip_of({f"f{i:03}.jsonl": b"{}" for i in range(200)}))
    end = data.rfind(b"PK\x05\x06")
    data[end + 8 : end + 12] = (1).to_bytes(2, "little") * 2  # "one entry", twice over
    error = refusal(bytes(data), "many.zip", max_members=5)
    assert "many.zip:" in str(error) and "directory" in str(error)


def test_too_many_entries_are_refused_naming_the_limit():
    data = zip_of({f"f{i}.jsonl": b"{}" for i in range(6)})
    error = refusal(data, "many.zip", max_members=5)
    assert str(error) == "many.zip: has 6 entries, more than the limit of 5"
    assert not error.too_large


# -- unsafe entries ----------------------------------------------------------------------------


def symlink_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("link.jsonl")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (zip_of({"../../etc/evil.jsonl": b"{}"}), "entry '../../etc/evil.jsonl' points outside"),
        (zip_of({"/etc/evil.jsonl": b"{}"}), "entry '/etc/evil.jsonl' points outside"),
        (zip_of({"..\\evil.jsonl": b"{}"}), "points outside the folder"),
        (zip_of({"C:/evil.jsonl": b"{}"}), "points outside the folder"),
        (zip_of({"ok/../../evil.jsonl": b"{}"}), "points outside the folder"),
        (symlink_zip(), "entry 'link.jsonl' is a symbolic link"),
        # zipfile expands bzip2 and lzma without a bound on one call's output
        (zip_of({"a.jsonl": b"{}"}, compression=zipfile.ZIP_BZIP2), "method 12; only stored"),
        (zip_of({"x" * 40 + ".jsonl": b"{}"}), "name longer than the limit of 32 characters"),
        (zip_of({"folder/": b""}), "the zip file holds no files"),
        (b"PK\x03\x04 not really", "not a readable zip file"),
    ],
)
def test_unsafe_or_broken_archives_are_refused_naming_the_entry(data, message):
    error = refusal(data, "up.zip", max_name_chars=32)
    assert str(error).startswith("up.zip: ") and message in str(error)
    assert not error.too_large


# -- plain files and folders -------------------------------------------------------------------


def test_a_plain_file_over_the_cap_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"{}\n" * 10_000)
    with pytest.raises(ArchiveError, match=r"big\.jsonl: larger than the 1,000-byte limit"):
        parse_path(path, limits=ArchiveLimits(max_total_bytes=1_000))


def test_a_folder_over_the_cap_is_refused_from_its_sizes(tmp_path):
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(b"{}\n" * 400)
    with pytest.raises(ArchiveError, match=r"2,400 bytes, more than the 2,000-byte limit"):
        parse_path(tmp_path, limits=ArchiveLimits(max_total_bytes=2_000))


# -- what must keep working --------------------------------------------------------------------


def test_a_zipped_session_with_its_subagents_still_parses():
    transcript = parse_bytes(session_zip(), "run.zip")
    assert [t.id for t in transcript.threads] == ["main", "agent-a1b2"]
    assert transcript.format == "claude-code-jsonl"


def test_a_zip_on_disk_parses_like_the_folder_it_holds(tmp_path):
    path = tmp_path / "run.zip"
    path.write_bytes(session_zip())
    from_zip, from_folder = parse_path(path), parse_path(SESSION)
    assert [t.id for t in from_zip.threads] == [t.id for t in from_folder.threads]
    assert from_zip.usage(include_subagents=True) == from_folder.usage(include_subagents=True)


# -- the command line --------------------------------------------------------------------------


def _inspect(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "transcripts", "inspect", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_inspect_refuses_a_zip_bomb_with_a_clear_message(tmp_path):
    path = tmp_path / "bomb.zip"
    write_zip_bomb(path, expanded_bytes=50 << 20, member="a.jsonl")
    result = _inspect(str(path))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: bomb.zip: entry 'a.jsonl' says it expands to more")


def test_inspect_takes_its_caps_as_options(tmp_path):
    path = tmp_path / "run.jsonl.gz"
    path.write_bytes(gzip_bomb(expanded_bytes=5 << 20))
    result = _inspect(str(path), "--max-ratio", "100000", "--max-bytes", "1000000")
    assert result.returncode == 2
    assert "entry 'run.jsonl' expands past the 1,000,000-byte limit" in result.stderr


def test_inspect_of_a_zipped_session_still_counts_its_subagents(tmp_path):
    path = tmp_path / "run.zip"
    path.write_bytes(session_zip())
    result = _inspect(str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert '"subagents": 1' in result.stdout
