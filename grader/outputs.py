"""How a case's outputs travel from the candidate's process to the judge's: raw bytes.

A case writes two files: `<stem>.json`, a small header (each output's dtype, shape and byte
count), and `<stem>.bin`, the outputs' bytes back to back, each at a 64-byte aligned offset. Both
sides map the file and move device bytes through two pinned buffers in turn, a chunk at a time:
while one chunk crosses the bus, the one before is copied between its pinned buffer and the
mapped file by all of the process's CPU threads (a plain write() of a chunk takes the file's lock
and allocates its pages on one core: at upstream KernelBench's level-1 sizes, 6.4 GB per case, that
one core was most of an evaluation's wall time). A multi-GB output is never pickled, checksummed
or held twice in host memory; where the judge's device has no room, it maps the file privately
and compares chunk by chunk (compare.py). No pickle is read either: the judge trusts nothing in
the header beyond what it checks against the file's size.
"""

import json
from pathlib import Path
from typing import Any

import torch

ALIGN_BYTES = 64
# Bytes moved between the device and a file per step (two pinned buffers per process).
STAGING_BYTES = 64 * 1024**2
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
        torch.uint16,
        torch.uint32,
        torch.uint64,
        torch.float8_e4m3fnuz,
        torch.float8_e5m2fnuz,
        torch.float8_e8m0fnu,
        torch.bool,
    )
}


class OutputFileError(ValueError):
    """The candidate's output files are missing, malformed or inconsistent."""


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN_BYTES) * ALIGN_BYTES


def write_outputs(stem: Path, outputs: list[torch.Tensor]) -> None:
    entries: list[dict[str, Any]] = []
    offset = 0
    for tensor in outputs:
        nbytes = tensor.numel() * tensor.element_size()
        name = str(tensor.dtype).removeprefix("torch.")
        entries.append({"dtype": name, "shape": list(tensor.shape), "offset": offset})
        offset = _aligned(offset + nbytes)
    data = stem.with_suffix(".bin")
    with data.open("wb") as fh:
        fh.truncate(offset)
    if offset:
        mapped = torch.from_file(str(data), shared=True, size=offset, dtype=torch.uint8)
        for tensor, entry in zip(outputs, entries, strict=True):
            flat = _flat_bytes(tensor)
            start = int(entry["offset"])
            _to_host(flat, mapped[start : start + flat.numel()])
        del mapped
    # The header last: its presence says the bytes are complete.
    stem.with_suffix(".json").write_text(json.dumps({"bytes": offset, "outputs": entries}))


def _flat_bytes(tensor: torch.Tensor) -> torch.Tensor:
    """A tensor's elements in logical order, as bytes (any dtype, fp8 and bool included)."""
    return tensor.detach().reshape(-1).contiguous().view(torch.uint8)


def _to_host(flat: torch.Tensor, dest: torch.Tensor) -> None:
    """Device bytes into mapped host pages: chunk k+1 crosses the bus into one pinned buffer
    while chunk k is copied out of the other."""
    if flat.device.type != "cuda":
        dest.copy_(flat)
        return
    staging, done = _staging_buffers(), _events()
    pending: tuple[int, int, int] | None = None
    for step, start in enumerate(range(0, flat.numel(), STAGING_BYTES)):
        which, count = step % 2, min(STAGING_BYTES, flat.numel() - start)
        staging[which][:count].copy_(flat[start : start + count], non_blocking=True)
        done[which].record()
        if pending is not None:
            _drain(pending, staging, done, dest)
        pending = (which, start, count)
    if pending is not None:
        _drain(pending, staging, done, dest)


def _drain(
    pending: tuple[int, int, int],
    staging: list[torch.Tensor],
    done: list[Any],
    dest: torch.Tensor,
) -> None:
    which, start, count = pending
    done[which].synchronize()
    dest[start : start + count].copy_(staging[which][:count])


_STAGING: list[torch.Tensor] = []
_EVENTS: list[Any] = []


def _staging_buffers() -> list[torch.Tensor]:
    if not _STAGING:
        _STAGING.extend(
            torch.empty(STAGING_BYTES, dtype=torch.uint8, pin_memory=True) for _ in range(2)
        )
    return _STAGING


def _events() -> list[Any]:
    if not _EVENTS:
        _EVENTS.extend(torch.cuda.Event() for _ in range(2))
    return _EVENTS


def _region(
    mapped: torch.Tensor, entry: dict[str, Any], dtype: torch.dtype, shape: tuple[int, ...]
) -> torch.Tensor:
    start = entry["offset"]
    count = 1
    for size in shape:
        count *= size
    nbytes = count * (torch.empty((), dtype=dtype).element_size())
    return mapped[start : start + nbytes].view(dtype).view(shape)


def read_outputs(stem: Path, device: str = "cpu") -> list[torch.Tensor]:
    """The outputs as tensors: on the CPU, over a private map of the file (pages load as they
    are read); on a GPU, read into device memory through a pinned buffer, or mapped as on the
    CPU where the device has no room for them."""
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
    loaded = _on_device(data, total) if device == "cuda" else None
    if loaded is None:
        loaded = torch.from_file(str(data), shared=False, size=total, dtype=torch.uint8)
    return [_region(loaded, {"offset": offset}, dtype, shape) for dtype, shape, offset in entries]


def _on_device(data: Path, total: int) -> torch.Tensor | None:
    """The file's bytes in device memory: chunk k is copied from the mapped file into one
    pinned buffer while chunk k-1 crosses the bus from the other."""
    try:
        loaded = torch.empty(total, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError:
        return None
    mapped = torch.from_file(str(data), shared=False, size=total, dtype=torch.uint8)
    staging, done = _staging_buffers(), _events()
    for step, start in enumerate(range(0, total, STAGING_BYTES)):
        which, count = step % 2, min(STAGING_BYTES, total - start)
        if step >= 2:
            done[which].synchronize()
        staging[which][:count].copy_(mapped[start : start + count])
        loaded[start : start + count].copy_(staging[which][:count], non_blocking=True)
        done[which].record()
    torch.cuda.current_stream().synchronize()
    return loaded


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
