"""Keep a worker's secrets out of reach of the processes it starts.

A child of the same user can read /proc/<parent>/environ, which shows the environment block the
parent was started with, whatever os.environ says later: unsetting a variable leaves its bytes
there. So the entries are erased in place, through /proc/self/mem, and the process is marked not
dumpable, which makes its /proc files (environ, mem) unreadable to other processes of its user
that are not root. Under bwrap and docker the child cannot see this process at all; this is what
still holds wherever a child shares its /proc.
"""

import ctypes
import os
import sys
from collections.abc import Iterable
from pathlib import Path

_PR_SET_DUMPABLE = 4


def environ_conceal(names: Iterable[str]) -> list[str]:
    """Remove `names` from this process's environment and erase their entries from the block
    /proc/self/environ shows; the names found. Raises OSError where the block cannot be
    written (not Linux), so that a worker never believes it concealed what it did not."""
    found = [name for name in names if name in os.environ]
    for name in found:
        del os.environ[name]  # also unsetenv(): libc's environ stops pointing at the entry
    if found:
        _erase_entries(found)
    _make_undumpable()
    return found


def _environ_block() -> tuple[int, int]:
    """[env_start, env_end) of this process: fields 50 and 51 of /proc/self/stat (proc(5))."""
    # Fields after the command name (which may contain spaces) start at field 3.
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[50 - 3]), int(fields[51 - 3])


def _erase_entries(names: list[str]) -> None:
    start, end = _environ_block()
    prefixes = tuple(f"{name}=".encode() for name in names)
    with open("/proc/self/mem", "r+b", buffering=0) as memory:
        memory.seek(start)
        block = memory.read(end - start)
        offset = 0
        for entry in block.split(b"\0"):
            if entry.startswith(prefixes):
                memory.seek(start + offset)
                memory.write(b"\0" * len(entry))
            offset += len(entry) + 1


def _make_undumpable() -> None:
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
