"""The grader's configuration where it runs without the Django project: the
`python -m grader` command, an agent's own check of its solution, the bench scripts on
a GPU host. There the ARENA_* variables are read here, and only here, as the defaults of
EvaluateOptions (and of the catalogue a slug is looked up in). A deployment's workers pass every
one of these values from config/settings.py instead, so none is read twice.
"""

import os
from pathlib import Path

HIDDEN_SEED = "ARENA_HIDDEN_SEED"
SCRATCH_DIR = "ARENA_SCRATCH_DIR"
BASELINE_CACHE = "ARENA_BASELINE_CACHE"
PROBE_CACHE = "ARENA_PROBE_CACHE"
JUDGE_KERNEL_CACHE = "ARENA_JUDGE_KERNEL_CACHE"
CATALOG_DIR = "ARENA_CATALOG_DIR"
IMPORTED_CATALOG_DIR = "ARENA_IMPORTED_CATALOG_DIR"
DATA_DIR = "ARENA_DATA_DIR"
SANDBOX_IMAGE = "ARENA_SANDBOX_IMAGE"
COMPILE_THREADS = "ARENA_GRADER_COMPILE_THREADS"
FORK_SERVER = "ARENA_GRADER_FORK_SERVER"

CACHE_HOME = Path.home() / ".cache" / "kernel-arena"
DEFAULT_CATALOG = Path(__file__).resolve().parents[1] / "tasks" / "catalog"


def text(name: str) -> str | None:
    """A variable's value; None where it is unset or empty."""
    return os.environ.get(name) or None


def hidden_seed() -> str | None:
    return text(HIDDEN_SEED)


def scratch_dir() -> str | None:
    return text(SCRATCH_DIR)


def baseline_cache() -> str:
    return text(BASELINE_CACHE) or str(CACHE_HOME / "baselines.json")


def probe_cache() -> str:
    return text(PROBE_CACHE) or str(CACHE_HOME / "probes.json")


def judge_kernel_cache() -> str:
    return text(JUDGE_KERNEL_CACHE) or str(CACHE_HOME / "judge-kernels")


def sandbox_image() -> str | None:
    return text(SANDBOX_IMAGE)


def compile_threads() -> int:
    value = text(COMPILE_THREADS)
    if value is None:
        return 1
    try:
        threads = int(value)
    except ValueError:
        raise ValueError(f"{COMPILE_THREADS} must be a whole number, not {value!r}") from None
    if threads < 0:
        raise ValueError(f"{COMPILE_THREADS} must be 0 or more, not {threads}")
    return threads


def fork_server() -> bool:
    value = (text(FORK_SERVER) or "1").strip().lower()
    if value not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
        raise ValueError(f"{FORK_SERVER} must be 1 or 0, not {value!r}")
    return value in ("1", "true", "yes", "on")


def catalog_dirs() -> tuple[str, ...]:
    """The source catalogue, then the imported one (ARENA_IMPORTED_CATALOG_DIR, else
    $ARENA_DATA_DIR/catalog, else var/catalog beside the source tree)."""
    source = Path(text(CATALOG_DIR) or DEFAULT_CATALOG)
    data_dir = Path(text(DATA_DIR) or DEFAULT_CATALOG.parents[1] / "var")
    imported = Path(text(IMPORTED_CATALOG_DIR) or data_dir / "catalog")
    return (str(source), str(imported))
