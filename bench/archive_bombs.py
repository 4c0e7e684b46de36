"""Hostile archives, built by streaming, for tests and for bench/archives.py.

    write_zip_bomb(path, expanded_bytes=1 << 30)       # one deflated entry of zeros (~1000x)
    gzip_bomb(expanded_bytes=20 << 20)                  # the same as a .gz, in memory
    with_declared_size(zip_bytes, 1_000)               # the headers understate the entry
    with_gzip_trailer_size(gz_bytes, 1_000)            # the trailer understates the file

The zeros are written a chunk at a time, so a 1 GiB bomb costs its writer a chunk of memory
(and a few seconds of deflate), never the gigabyte.
"""

from __future__ import annotations

import gzip
import io
import struct
import zipfile
from pathlib import Path
from typing import BinaryIO

CHUNK_BYTES = 1 << 20
_ZEROS = bytes(CHUNK_BYTES)


def _write_zeros(stream: BinaryIO, expanded_bytes: int) -> None:
    left = expanded_bytes
    while left > 0:
        stream.write(_ZEROS[: min(left, CHUNK_BYTES)])
        left -= CHUNK_BYTES


def write_zip_bomb(
    target: Path | BinaryIO, *, expanded_bytes: int, member: str = "bomb.jsonl"
) -> None:
    """A zip with one deflated entry of `expanded_bytes` zeros (headers honest)."""
    with (
        zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open(member, "w") as entry,
    ):
        _write_zeros(entry, expanded_bytes)


def zip_bomb(*, expanded_bytes: int, member: str = "bomb.jsonl") -> bytes:
    buffer = io.BytesIO()
    write_zip_bomb(buffer, expanded_bytes=expanded_bytes, member=member)
    return buffer.getvalue()


def gzip_bomb(*, expanded_bytes: int) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as packed:
        _write_zeros(packed, expanded_bytes)
    return buffer.getvalue()


def with_declared_size(zip_bytes: bytes, declared_bytes: int) -> bytes:
    """The zip with every entry's uncompressed size, in its local header and in the central
    directory, replaced by `declared_bytes` (no zip64 entries)."""
    patched = bytearray(zip_bytes)
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = patched.find(signature)
        while start >= 0:
            struct.pack_into("<I", patched, start + offset, declared_bytes)
            start = patched.find(signature, start + 4)
    return bytes(patched)


def with_gzip_trailer_size(gz_bytes: bytes, declared_bytes: int) -> bytes:
    """The .gz with its trailer's size (ISIZE, the last four bytes) replaced."""
    return gz_bytes[:-4] + struct.pack("<I", declared_bytes % (1 << 32))
