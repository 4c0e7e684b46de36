"""How a case's outputs travel from the candidate's process to the judge's: raw bytes.

A case writes two files: `<stem>.json`, a small header (each output's dtype, shape and byte
count), and `<stem>.bin`, the outputs' bytes back to back, each at a 64-byte aligned offset. The
candidate copies its device outputs straight into a shared memory map of the file, and the judge
maps it back privately, so a multi-GB output is never pickled, checksummed or held twice, and the
judge moves it to the device chunk by chunk as it compares (compare.py). No pickle is read
either: the judge trusts nothing in the header beyond what it checks against the file's size.
"""

import json
import os
from pathlib import Path
from typing import Any

import torch

ALIGN_BYTES = 64
HEADER_MAX_BYTES = 1 << 20
DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.float8_e4m3fn,
        torch.float8_e5m2,
        torch.complex64,
        torch.complex128,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
    )
}


class OutputFileError(ValueError):
    """The candidate's output files are missing, malformed or inconsistent."""


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN_BYTES) * ALIGN_BYTES


def write_outputs(stem: Path, outputs: list[torch.Tensor]) -> None:
    entries, offset = [], 0
    for tensor in outputs:
        nbytes = tensor.numel() * tensor.element_size()
        name = str(tensor.dtype).removeprefix("torch.")
        entries.append({"dtype": name, "shape": list(tensor.shape), "offset": offset})
        offset = _aligned(offset + nbytes)
    data = stem.with_suffix(".bin")
    data.touch()
    if offset:
        mapped = torch.from_file(str(data), shared=True, size=offset, dtype=torch.uint8)
        for tensor, entry in zip(outputs, entries, strict=True):
            _region(mapped, entry, tensor.dtype, tuple(tensor.shape)).copy_(tensor.detach())
        del mapped
    os.truncate(data, offset)
    # The header last: its presence says the bytes are complete.
    stem.with_suffix(".json").write_text(json.dumps({"bytes": offset, "outputs": entries}))


def _region(
    mapped: torch.Tensor, entry: dict[str, Any], dtype: torch.dtype, shape: tuple[int, ...]
) -> torch.Tensor:
    start = entry["offset"]
    count = 1
    for size in shape:
        count *= size
    nbytes = count * (torch.empty((), dtype=dtype).element_size())
    return mapped[start : start + nbytes].view(dtype).view(shape)


def read_outputs(stem: Path) -> list[torch.Tensor]:
    """The outputs as CPU tensors over a private map of the file (pages load as they are read)."""
    header_path, data = stem.with_suffix(".json"), stem.with_suffix(".bin")
    if not header_path.is_file() or not data.is_file():
        raise OutputFileError("no output was written")
    if header_path.stat().st_size > HEADER_MAX_BYTES:
        raise OutputFileError("the output header is too large")
    try:
        header = json.loads(header_path.read_text())
        entries = [_checked_entry(e) for e in header["outputs"]]
        total = int(header["bytes"])
    except (ValueError, KeyError, TypeError) as exc:
        raise OutputFileError(f"the output header is malformed: {exc}") from None
    if data.stat().st_size != total or not _fits(entries, total):
        raise OutputFileError("the output bytes do not match their header")
    if total == 0:
        return [torch.empty(shape, dtype=dtype) for dtype, shape, _ in entries]
    mapped = torch.from_file(str(data), shared=False, size=total, dtype=torch.uint8)
    return [_region(mapped, {"offset": offset}, dtype, shape) for dtype, shape, offset in entries]


def _checked_entry(entry: dict[str, Any]) -> tuple[torch.dtype, tuple[int, ...], int]:
    dtype = DTYPES[entry["dtype"]]
    shape = tuple(int(s) for s in entry["shape"])
    offset = int(entry["offset"])
    if any(s < 0 for s in shape) or offset < 0 or offset % ALIGN_BYTES:
        raise ValueError("negative size or misaligned offset")
    return dtype, shape, offset


def _fits(entries: list[tuple[torch.dtype, tuple[int, ...], int]], total: int) -> bool:
    """Every output lies inside the file and after the one before it."""
    end = 0
    for dtype, shape, offset in entries:
        count = 1
        for size in shape:
            count *= size
        if offset < end:
            return False
        end = offset + count * torch.empty((), dtype=dtype).element_size()
    return end <= total
