"""The evaluation's private folders: where outputs pass through host memory when they do, and how
a killed worker's leftovers are swept.
"""

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

SHM_DIR = "/dev/shm"  # noqa: S108 - created private per evaluation by TemporaryDirectory


SHM_MIN_FREE_BYTES = 32 * 1024**3


# A scratch file system with less than this free (or 2% of its size) counts as full.
SCRATCH_FULL_BYTES = 1024**3


def scratch_root(configured: str | None = None) -> str | None:
    """Where outputs travel from the candidate to the judge: `configured`, else memory-backed
    when it is roomy.

    A GPU task's outputs run to gigabytes per evaluation; /dev/shm spares the disk, but
    containers often give it only 64 MB, so it is used only with room to spare.
    """
    if configured:
        return configured
    try:
        usage = shutil.disk_usage(SHM_DIR)
    except OSError:
        return None
    writable = os.access(SHM_DIR, os.W_OK)
    return SHM_DIR if writable and usage.free > SHM_MIN_FREE_BYTES else None


@contextlib.contextmanager
def private_scratch(prefix: str, *, root: str | None = None) -> Iterator[Path]:
    """A private folder, removed when the block ends. Its name holds this process's pid, so that
    a later evaluation removes what a killed worker left (candidate outputs, built extensions)."""
    folder = Path(root or tempfile.gettempdir())
    _sweep_stale_scratch(folder, prefix)
    with tempfile.TemporaryDirectory(prefix=_owned_prefix(prefix), dir=folder) as tmp:
        yield Path(tmp)


def new_private_folder(prefix: str, *, root: str | None = None) -> Path:
    """A folder named as private_scratch names its own, for the caller to remove (a prepared
    slot's, prepared.discard_slot)."""
    folder = Path(root or tempfile.gettempdir())
    _sweep_stale_scratch(folder, prefix)
    return Path(tempfile.mkdtemp(prefix=_owned_prefix(prefix), dir=folder))


def _owned_prefix(prefix: str) -> str:
    # The pid in the name lets _sweep_stale_scratch remove what a killed worker left.
    return f"{prefix}-{os.getpid()}-"


def _sweep_stale_scratch(folder: Path, prefix: str) -> None:
    for stale in folder.glob(f"{prefix}-*-*"):
        owner = stale.name.removeprefix(f"{prefix}-").split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            shutil.rmtree(stale, ignore_errors=True)
