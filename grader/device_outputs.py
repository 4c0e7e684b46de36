"""Outputs that stay on the GPU: from the sandboxed candidate to the judge without host memory.

The candidate's harness copies a case's outputs, back to back at ALIGN_BYTES offsets, into one
allocation made with CUDA's virtual memory API (cuMemCreate, shareable as a POSIX file
descriptor), exports the descriptor and sends it with a small JSON header over a Unix socket
(SCM_RIGHTS) to the grading process, which holds it and maps nothing (it has no CUDA context).
Once the candidate's process tree is gone, the judge receives the descriptors over a socket of
its own, imports and maps each into its own address space and compares at device bandwidth.
The sockets are files in each child's folder: a path socket needs no shared network, IPC or PID
namespace, so it crosses the bwrap and docker boundary as the folder does.

Nothing here trusts the candidate: the judge checks each header against the mapping it made of
the declared bytes (outputs.py's rules), refuses an allocation larger than its declared bytes
(it maps one more granule past them, which must fail), more descriptors than the plan's cases,
and more declared bytes than the device budget; a descriptor that is no CUDA allocation fails its
import. Any refusal reads as that case's malformed output (OutputFileError), the solution's
failure. Any failure on the candidate's side (an old driver, no socket) sends that case through
host memory instead (outputs.py), so the device path is never needed for a verdict.

ctypes over libcuda.so.1: torch has no API for shareable VMM handles.
"""

import contextlib
import ctypes
import json
import math
import os
import select
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from grader.outputs import DTYPES, OutputFileError

ALIGN_BYTES = 256
HEADER_MAX_BYTES = 64 * 1024
SOCKET_NAME = "outputs.sock"
# The device budget's share of the evaluation's memory at most: the judge's reference, its
# inputs and the comparison's chunks need the rest.
DEVICE_SHARE_MAX = 0.5
RESERVE_BYTES = 4 * 1024**3
# The judge's need beside the held outputs, in multiples of the reference's measured peak on
# the visible shape, and of that peak scaled to the plan's largest shape (an unseen shape drawn
# up to twice as large per dimension: its inputs, drawn with their distribution's temporaries,
# and the reference's outputs).
JUDGE_PEAK_MULTIPLE = 3
LARGEST_PEAK_MULTIPLE = 2

_CU_MEM_ALLOCATION_TYPE_PINNED = 1
_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
_CU_MEM_LOCATION_TYPE_DEVICE = 1
_CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
_CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [
        ("compressionType", ctypes.c_ubyte),
        ("gpuDirectRDMACapable", ctypes.c_ubyte),
        ("usage", ctypes.c_ushort),
        ("reserved", ctypes.c_ubyte * 4),
    ]


class _AllocationProp(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("requestedHandleTypes", ctypes.c_int),
        ("location", _Location),
        ("win32HandleMetaData", ctypes.c_void_p),
        ("allocFlags", _AllocFlags),
    ]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class DriverError(RuntimeError):
    """A CUDA driver call failed; its name and code are in the message."""


class _Driver:
    """The few driver calls this needs, on the context torch made current."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        torch.cuda.init()
        self.ordinal = torch.cuda.current_device()
        self.prop = _AllocationProp()
        self.prop.type = _CU_MEM_ALLOCATION_TYPE_PINNED
        self.prop.requestedHandleTypes = _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        self.prop.location = _Location(_CU_MEM_LOCATION_TYPE_DEVICE, self.ordinal)
        granularity = ctypes.c_size_t()
        self.call(
            "cuMemGetAllocationGranularity",
            ctypes.byref(granularity),
            ctypes.byref(self.prop),
            _CU_MEM_ALLOC_GRANULARITY_MINIMUM,
        )
        self.granularity = int(granularity.value)

    def call(self, name: str, *args: Any) -> None:
        code = getattr(self.lib, name)(*args)
        if code != 0:
            raise DriverError(f"{name} failed with CUDA error {code}")

    def rounded(self, nbytes: int) -> int:
        return max(1, math.ceil(nbytes / self.granularity)) * self.granularity

    def create(self, size: int) -> int:
        handle = ctypes.c_ulonglong()
        self.call(
            "cuMemCreate", ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(self.prop), 0
        )
        return int(handle.value)

    def map(self, handle: int, size: int) -> int:
        """A fresh address range with the allocation's first `size` bytes mapped read-write for
        this device; the caller unmaps it (unmap)."""
        pointer = ctypes.c_ulonglong()
        self.call(
            "cuMemAddressReserve", ctypes.byref(pointer), ctypes.c_size_t(size),
            ctypes.c_size_t(0), ctypes.c_ulonglong(0), ctypes.c_ulonglong(0),
        )  # fmt: skip
        try:
            self.call(
                "cuMemMap", ctypes.c_ulonglong(pointer.value), ctypes.c_size_t(size),
                ctypes.c_size_t(0), ctypes.c_ulonglong(handle), ctypes.c_ulonglong(0),
            )  # fmt: skip
        except DriverError:
            self.lib.cuMemAddressFree(ctypes.c_ulonglong(pointer.value), ctypes.c_size_t(size))
            raise
        access = _AccessDesc(
            _Location(_CU_MEM_LOCATION_TYPE_DEVICE, self.ordinal),
            _CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        )
        try:
            self.call(
                "cuMemSetAccess", ctypes.c_ulonglong(pointer.value), ctypes.c_size_t(size),
                ctypes.byref(access), ctypes.c_size_t(1),
            )  # fmt: skip
        except DriverError:
            self.unmap(int(pointer.value), size)
            raise
        return int(pointer.value)

    def unmap(self, pointer: int, size: int) -> None:
        self.lib.cuMemUnmap(ctypes.c_ulonglong(pointer), ctypes.c_size_t(size))
        self.lib.cuMemAddressFree(ctypes.c_ulonglong(pointer), ctypes.c_size_t(size))

    def release(self, handle: int) -> None:
        self.lib.cuMemRelease(ctypes.c_ulonglong(handle))

    def export(self, handle: int) -> int:
        fd = ctypes.c_int(-1)
        self.call(
            "cuMemExportToShareableHandle",
            ctypes.byref(fd),
            ctypes.c_ulonglong(handle),
            _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            ctypes.c_ulonglong(0),
        )
        return int(fd.value)

    def import_fd(self, fd: int) -> int:
        handle = ctypes.c_ulonglong()
        self.call(
            "cuMemImportFromShareableHandle",
            ctypes.byref(handle),
            ctypes.c_void_p(fd),
            _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        )
        return int(handle.value)


_DRIVER: list[_Driver] = []


def _driver() -> _Driver:
    if not _DRIVER:
        _DRIVER.append(_Driver())
    return _DRIVER[0]


class _DeviceBytes:
    """A mapped range as a torch uint8 tensor (no copy; torch does not own the memory)."""

    def __init__(self, pointer: int, nbytes: int) -> None:
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (pointer, False),
            "version": 2,
        }


def _as_tensor(pointer: int, nbytes: int) -> torch.Tensor:
    return torch.as_tensor(_DeviceBytes(pointer, nbytes), device="cuda")


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN_BYTES) * ALIGN_BYTES


def device_budget_bytes(
    total_bytes: int, visible_peak_bytes: int | None, largest_peak_bytes: int | None = None
) -> int:
    """Output bytes one evaluation may hold on the device between candidate and judge: at most
    DEVICE_SHARE_MAX of its memory, and never the room the judge needs (the reserve, and three
    times the reference's measured peak where the probe measured it, or twice that peak scaled
    to the plan's largest shape where that is more)."""
    judge_needs = judge_needs_bytes(visible_peak_bytes, largest_peak_bytes)
    return max(0, min(int(total_bytes * DEVICE_SHARE_MAX), total_bytes - judge_needs))


def judge_needs_bytes(visible_peak_bytes: int | None, largest_peak_bytes: int | None = None) -> int:
    """The room the judge keeps beside the outputs it is handed (device_budget_bytes)."""
    peaks = (
        JUDGE_PEAK_MULTIPLE * int(visible_peak_bytes or 0),
        LARGEST_PEAK_MULTIPLE * int(largest_peak_bytes or 0),
    )
    return RESERVE_BYTES + max(peaks)


# ---- the candidate's side ---------------------------------------------------------------------


class Outbox:
    """The candidate harness's sender: `send` returns False where this case goes through host
    memory instead (over the budget, or anything the driver or the socket refused)."""

    def __init__(self, socket_path: str, budget_bytes: int) -> None:
        self.socket_path, self.budget_bytes = socket_path, budget_bytes
        self.sent_bytes = 0
        self._socket: socket.socket | None = None
        self.disabled = ""

    def send(self, shape: int, case: int, outputs: list[torch.Tensor]) -> bool:
        if self.disabled:
            return False
        entries, total = _layout(outputs)
        try:
            driver = _driver()
        except (OSError, DriverError, AttributeError) as exc:
            self.disabled = f"no driver: {exc}"
            return False
        size = driver.rounded(total)
        if self.sent_bytes + size > self.budget_bytes:
            return False
        try:
            fd = self._export(driver, outputs, entries, size)
        except (DriverError, RuntimeError) as exc:
            self.disabled = str(exc)
            return False
        header = json.dumps(
            {"shape": shape, "case": case, "bytes": total, "outputs": entries}
        ).encode()
        try:
            socket.send_fds(self._connected(), [header], [fd])
        except OSError as exc:
            self.disabled = f"socket: {exc}"
            return False
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.sent_bytes += size
        return True

    def _export(
        self, driver: _Driver, outputs: list[torch.Tensor], entries: list[dict[str, Any]], size: int
    ) -> int:
        handle = driver.create(size)
        try:
            pointer = driver.map(handle, size)
            try:
                region = _as_tensor(pointer, size)
                for tensor, entry in zip(outputs, entries, strict=True):
                    flat = tensor.detach().reshape(-1).contiguous().view(torch.uint8)
                    start = int(entry["offset"])
                    region[start : start + flat.numel()].copy_(flat)
                torch.cuda.synchronize()
                del region
            finally:
                driver.unmap(pointer, size)
            return driver.export(handle)
        finally:
            # The exported descriptor keeps the allocation alive; the handle is no longer needed.
            driver.release(handle)

    def _connected(self) -> socket.socket:
        if self._socket is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            sock.connect(self.socket_path)
            self._socket = sock
        return self._socket


def _layout(outputs: list[torch.Tensor]) -> tuple[list[dict[str, Any]], int]:
    entries, offset = [], 0
    for tensor in outputs:
        nbytes = tensor.numel() * tensor.element_size()
        name = str(tensor.dtype).removeprefix("torch.")
        entries.append({"dtype": name, "shape": list(tensor.shape), "offset": offset})
        offset = _aligned(offset + nbytes)
    return entries, max(offset, ALIGN_BYTES)


# ---- the grading process: it holds the descriptors, maps nothing -------------------------------


@dataclass
class Held:
    header: bytes
    fd: int


class _Wake:
    """A pipe that a thread waiting on a socket watches beside it, so that stop() ends the wait
    at once rather than at the socket's next timeout (two 0.2 s timeouts were most of a GPU
    evaluation's time between its candidate's end and its judge's start)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._read, self._write = os.pipe()
        self._closing = threading.Lock()
        self._open = True

    def wait(self, sock: socket.socket) -> None:
        """Until `sock` has something to read (or has closed) or stop() is set. poll, not
        select: a long-lived grading process's descriptors may number past select's 1024.
        OSError where the socket was closed meanwhile."""
        if sock.fileno() < 0:
            raise OSError("the socket is closed")
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        poller.register(self._read, select.POLLIN)
        poller.poll()

    def set(self) -> None:
        if not self.stop.is_set():
            self.stop.set()
            with contextlib.suppress(OSError):
                os.write(self._write, b"x")

    def close(self) -> None:
        """Once: a descriptor closed twice could close another file that reused its number."""
        with self._closing:
            if self._open:
                self._open = False
                _close_all([self._read, self._write])


@dataclass
class Broker:
    """Listens in the candidate's folder while the candidate runs, keeps at most `max_cases`
    descriptors, then hands them to the judge through a socket in the judge's folder."""

    folder: Path
    max_cases: int
    held: list[Held] = field(default_factory=list)
    refused: int = 0
    # Descriptors taken from the candidate (held until the judge has them).
    received: int = 0

    def __post_init__(self) -> None:
        self._letting_go = threading.Lock()
        self.path = self.folder / SOCKET_NAME
        self.path.unlink(missing_ok=True)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._listener.bind(str(self.path))
        self._listener.listen(4)
        self._listener.setblocking(False)
        self._wake = _Wake()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        # After stop(), what is already queued is still read, without waiting: the connections
        # of a process tree that is gone end as soon as their buffered messages are out.
        while True:
            stopping = self._wake.stop.is_set()
            try:
                if not stopping:
                    self._wake.wait(self._listener)
                conn, _ = self._listener.accept()
            except BlockingIOError:
                if stopping:
                    return
                continue
            except OSError:
                return
            with conn:
                conn.setblocking(False)
                self._receive(conn)

    def _receive(self, conn: socket.socket) -> None:
        while True:
            stopping = self._wake.stop.is_set()
            try:
                if not stopping:
                    self._wake.wait(conn)
                header, fds, _, _ = socket.recv_fds(conn, HEADER_MAX_BYTES, 1)
            except BlockingIOError:
                # A connection kept open past the candidate's end (its own socket sent back
                # over itself, say) is dropped once stop() was called and its messages read.
                if stopping:
                    return
                continue
            except OSError:
                return
            if not header and not fds:
                return  # the candidate closed its end
            if len(fds) == 1 and len(self.held) < self.max_cases:
                self.held.append(Held(header, fds[0]))
                self.received += 1
                continue
            self.refused += 1
            _close_all(fds)

    def stop(self) -> None:
        """The candidate is gone: stop listening; what it sent stays held."""
        self._wake.set()
        self._thread.join(timeout=5)
        self._listener.close()
        self._wake.close()
        self.path.unlink(missing_ok=True)

    def serve(self, folder: Path) -> "Handoff":
        return Handoff(folder / SOCKET_NAME, self)

    def let_go(self) -> None:
        """Close this process's descriptors, once: the hand-off's thread and close() may both
        get here, and a descriptor closed twice could close another file that reused it."""
        with self._letting_go:
            held, self.held = self.held, []
        _close_all([h.fd for h in held])

    def close(self) -> None:
        self.stop()
        self.let_go()


class Handoff:
    """One connection from the judge: every held descriptor, then an empty message."""

    def __init__(self, path: Path, broker: Broker) -> None:
        self.path, self.broker = path, broker
        path.unlink(missing_ok=True)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._listener.bind(str(path))
        self._listener.listen(1)
        self._listener.setblocking(False)
        self._wake = _Wake()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                self._wake.wait(self._listener)
                if self._wake.stop.is_set():
                    return
                conn, _ = self._listener.accept()
            except BlockingIOError:
                continue
            except OSError:
                return
            with conn, contextlib.suppress(OSError):
                conn.setblocking(True)
                for held in self.broker.held:
                    socket.send_fds(conn, [held.header], [held.fd])
                conn.send(b"")
                # The judge holds them now: this process lets go of its own descriptors, so
                # that each case's memory goes back to the device as soon as the judge has
                # compared it and released its import, not at the evaluation's end.
                self.broker.let_go()
            return

    def close(self) -> None:
        self._wake.set()
        self._thread.join(timeout=5)
        self._listener.close()
        self._wake.close()
        self.path.unlink(missing_ok=True)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


# ---- the judge's side -------------------------------------------------------------------------


@dataclass
class _Imported:
    handle: int
    pointer: int
    size: int
    nbytes: int
    entries: list[tuple[torch.dtype, tuple[int, ...], int]]


class Inbox:
    """The judge's descriptors, imported and checked as they arrive; `outputs(shape, case)` the
    case's tensors over the mapping (None: it went through host memory), `release` after use."""

    def __init__(self) -> None:
        self.cases: dict[tuple[int, int], _Imported] = {}
        self.refused: dict[tuple[int, int], str] = {}

    @classmethod
    def receive(cls, socket_path: str, *, budget_bytes: int, max_cases: int) -> "Inbox":
        inbox = cls()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.settimeout(30)
        sock.connect(socket_path)
        with sock:
            declared = 0
            while True:
                header, fds, _, _ = socket.recv_fds(sock, HEADER_MAX_BYTES, 1)
                if not header and not fds:
                    return inbox
                declared += inbox._take(header, fds, budget_bytes - declared, max_cases)

    def _take(self, header: bytes, fds: list[int], room: int, max_cases: int) -> int:
        try:
            key, nbytes, entries = _checked_header(header)
        except (ValueError, KeyError, TypeError) as exc:
            _close_all(fds)
            raise OutputFileError(f"a device output's header is malformed: {exc}") from None
        try:
            if len(fds) != 1:
                raise OutputFileError("a device output came without exactly one descriptor")
            if key in self.cases or len(self.cases) >= max_cases:
                raise OutputFileError("more device outputs than the plan's cases")
            driver = _driver()
            size = driver.rounded(nbytes)
            if size > room:
                raise OutputFileError("the device outputs are over the evaluation's budget")
            self.cases[key] = _import_checked(driver, fds[0], size, nbytes, entries)
            return size
        except (OutputFileError, DriverError) as exc:
            self.refused[key] = str(exc)
            return 0
        finally:
            _close_all(fds)

    def outputs(self, shape: int, case: int) -> list[torch.Tensor] | None:
        key = (shape, case)
        if key in self.refused:
            raise OutputFileError(self.refused[key])
        imported = self.cases.get(key)
        if imported is None:
            return None
        region = _as_tensor(imported.pointer, imported.size)
        return [
            region[offset : offset + _numel(shape) * _itemsize(dtype)].view(dtype).view(shape)
            for dtype, shape, offset in imported.entries
        ]

    def nbytes(self, shape: int, case: int) -> int:
        imported = self.cases.get((shape, case))
        return imported.nbytes if imported else 0

    def release(self, shape: int, case: int) -> None:
        imported = self.cases.pop((shape, case), None)
        if imported is None:
            return
        driver = _driver()
        torch.cuda.synchronize()
        driver.unmap(imported.pointer, imported.size)
        driver.release(imported.handle)

    def close(self) -> None:
        for shape, case in list(self.cases):
            self.release(shape, case)


def _import_checked(
    driver: _Driver,
    fd: int,
    size: int,
    nbytes: int,
    entries: list[tuple[torch.dtype, tuple[int, ...], int]],
) -> _Imported:
    try:
        handle = driver.import_fd(fd)
    except DriverError:
        raise OutputFileError("a device output is not a CUDA allocation") from None
    try:
        pointer = driver.map(handle, size)
    except DriverError:
        driver.release(handle)
        # The driver maps an allocation only whole: larger or smaller than declared, it fails.
        raise OutputFileError(
            "a device output's allocation is not the size of its outputs"
        ) from None
    try:
        _refuse_oversized(driver, handle, size)
    except OutputFileError:
        driver.unmap(pointer, size)
        driver.release(handle)
        raise
    return _Imported(handle, pointer, size, nbytes, entries)


def _refuse_oversized(driver: _Driver, handle: int, size: int) -> None:
    """An allocation larger than its declared bytes would hold device memory the judge needs:
    mapping one granule more than them must fail (a mapping starts at the allocation's start)."""
    try:
        pointer = driver.map(handle, size + driver.granularity)
    except DriverError:
        return
    driver.unmap(pointer, size + driver.granularity)
    raise OutputFileError("a device output's allocation is larger than the size of its outputs")


def _checked_header(
    header: bytes,
) -> tuple[tuple[int, int], int, list[tuple[torch.dtype, tuple[int, ...], int]]]:
    data = json.loads(header.decode())
    key = (int(data["shape"]), int(data["case"]))
    nbytes = int(data["bytes"])
    entries = []
    end = 0
    for entry in data["outputs"]:
        dtype = DTYPES[entry["dtype"]]
        shape = tuple(int(s) for s in entry["shape"])
        offset = int(entry["offset"])
        if any(s < 0 for s in shape) or offset < end or offset % ALIGN_BYTES:
            raise ValueError("negative size, overlapping or misaligned offset")
        end = offset + _numel(shape) * _itemsize(dtype)
        entries.append((dtype, shape, offset))
    if end > nbytes or nbytes <= 0:
        raise ValueError("the outputs do not lie inside the declared bytes")
    return key, nbytes, entries


def _numel(shape: tuple[int, ...]) -> int:
    count = 1
    for size in shape:
        count *= size
    return count


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


@contextlib.contextmanager
def judge_inbox(job: dict[str, Any]) -> Iterator[Inbox | None]:
    """The judge's inbox where the job names a socket (CUDA, the device path on), else None."""
    path = job.get("output_socket")
    if not path or job.get("device") != "cuda":
        yield None
        return
    inbox = Inbox.receive(
        path,
        budget_bytes=int(job.get("device_output_budget_bytes") or 0),
        max_cases=sum(len(s["cases"]) for s in job["shapes"]),
    )
    try:
        yield inbox
    finally:
        inbox.close()
