"""A bytecode cache for the grader's own processes, where the installed torch ships none.

pip writes each module's bytecode beside its source when it installs a package, and Python reads
it there. Some images have none and forbid writing it (PYTHONDONTWRITEBYTECODE=1, common in
Dockerfiles): there every process compiles every module it imports from source, every time.
Measured on one such GPU host (2026-11-28, bench/results/README.md "eighth step"): `import torch`
4.2 s, and torch.compile's compiler stack (torch._dynamo, inductor, sympy) 6-10 s more, where
the compile itself took 3 s.

Where torch's own bytecode is missing, the grader's trusted processes (the grading process, the
probe's and the judge's children, the compile warm-up, the warm judge) keep the bytecode they
compile in a folder of the grader's (PYTHONPYCACHEPREFIX, `sys.pycache_prefix`): the judge's
kernel cache's `bytecode`, beside its Triton and inductor caches. The host's first evaluation
compiles as before; the next ones read it. The installed packages' folders are never written,
and where bytecode is installed nothing changes. Only installed modules' bytecode is kept: a
task's file loaded by path (modules.load_module, each evaluation's copy of the reference) keeps
none, so the folder holds one file per installed module the grader imports, however many
evaluations run.

A candidate's child (and the decoy test's) reads the folder where it runs this host's
interpreter (bwrap, the process backend) and the trusted processes have kept torch's bytecode
there. It keeps PYTHONDONTWRITEBYTECODE, so it writes nothing, and only the folder's subtrees
that mirror the sources it may read (Python's own folders, site-packages, the system's, the
grader's code) are bound into its sandbox, read-only (`readable_subtrees`): it sees the bytecode
of nothing whose source it could not read, and nothing else of the judge's kernel cache. Before
torch's bytecode is there (the host's first evaluation) it is given nothing: with a prefix,
Python would also pass over the standard library's own bytecode.

A folder the user names with PYTHONPYCACHEPREFIX is the grader's trusted processes' too, but
never a candidate's: it may hold the bytecode of the user's own programs.

`python -m grader prepare` (`prepare`), a GPU host's install step, fills the folder ahead, so
that the host's first evaluation reads it as its later ones do.
"""

import functools
import importlib.util
import os
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterable
from pathlib import Path

PREFIX_VARIABLE = "PYTHONPYCACHEPREFIX"
FOLDER_NAME = "bytecode"


@functools.cache
def _source(module: str) -> Path | None:
    """`module`'s source file, found without importing it; None where it has none (not
    installed, built in, an extension)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _bytecode_name(source: Path) -> str | None:
    """The name of `source`'s bytecode file for this interpreter; None where it keeps none."""
    tag = sys.implementation.cache_tag
    return None if tag is None else f"{source.stem}.{tag}.pyc"


def _mirrored(root: Path, path: Path) -> Path:
    """Where a bytecode prefix at `root` keeps what belongs to `path`: it mirrors the absolute
    path below it."""
    return root / path.relative_to(path.anchor)


@functools.cache
def installed_without_bytecode(module: str = "torch") -> bool:
    """Whether `module`'s package has no bytecode beside its source (found without importing
    it). A module that is not installed, or has no source, is not missing any."""
    source = _source(module)
    name = source and _bytecode_name(source)
    if source is None or name is None:
        return False
    return not (source.parent / "__pycache__" / name).is_file()


def folder(judge_kernel_cache: str) -> Path:
    """Where the grader keeps the bytecode it compiles: the user's own prefix, else its own."""
    named = os.environ.get(PREFIX_VARIABLE)
    return Path(named) if named else Path(judge_kernel_cache) / FOLDER_NAME


def child_env(judge_kernel_cache: str) -> dict[str, str]:
    """The variables a trusted child needs to keep and read its bytecode in the grader's folder;
    none where the installed torch has its own. An empty PYTHONDONTWRITEBYTECODE is unset, for
    Python."""
    if not installed_without_bytecode():
        return {}
    return {PREFIX_VARIABLE: str(folder(judge_kernel_cache)), "PYTHONDONTWRITEBYTECODE": ""}


def kept_for_reading(judge_kernel_cache: str) -> Path | None:
    """The grader's own folder, for a candidate to read, where the installed torch has no
    bytecode of its own and a trusted process has kept torch's there; None otherwise, and None
    where the user names a folder of their own (PYTHONPYCACHEPREFIX)."""
    if not installed_without_bytecode() or os.environ.get(PREFIX_VARIABLE):
        return None
    source = _source("torch")
    name = source and _bytecode_name(source)
    if source is None or name is None:
        return None
    path = folder(judge_kernel_cache)
    kept = _mirrored(path, source.parent) / name
    return path if kept.is_file() else None


def readable_subtrees(kept: Path, sources: Iterable[Path]) -> list[Path]:
    """The subtrees of the folder `kept` that hold the bytecode of the source folders
    `sources` (as given and resolved), where there are any: the prefix mirrors each source's
    absolute path."""
    found: set[Path] = set()
    for source in sources:
        for form in {Path(os.path.abspath(source)), Path(source).resolve()}:
            subtree = _mirrored(kept, form)
            if subtree.is_dir():
                found.add(subtree)
    return sorted(found)


def use_here(judge_kernel_cache: str) -> bool:
    """This process's later imports keep and read their bytecode in the grader's folder, where
    the installed torch has none (the command line, before its own import of torch). True where
    it does."""
    if not installed_without_bytecode():
        return False
    path = folder(judge_kernel_cache)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # a folder that cannot be made leaves the imports as they were
        return False
    sys.pycache_prefix = str(path)
    sys.dont_write_bytecode = False
    return True


def installed_roots() -> list[Path]:
    """The folders of this interpreter's installed modules: its standard library (which a prefix
    passes over too) and its packages."""
    paths = sysconfig.get_paths()
    return [Path(paths["stdlib"]), *{Path(paths["purelib"]), Path(paths["platlib"])}]


def prepare(judge_kernel_cache: str, roots: Iterable[Path]) -> dict[str, object]:
    """A GPU host's install step (`python -m grader prepare`): where the installed torch ships
    no bytecode, every module under `roots` (installed_roots and the grader's own code) is
    compiled once into the grader's folder, as pip would have compiled it beside its source,
    so that the host's first evaluation starts as its later ones do. Nothing is written where
    the installed torch has its bytecode."""
    path = folder(judge_kernel_cache)
    if not installed_without_bytecode():
        return {"needed": False, "folder": str(path)}
    folders = [str(r) for r in roots if Path(r).is_dir()]
    path.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    env = {**os.environ, PREFIX_VARIABLE: str(path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # Some installed files are not meant to compile (a test of a syntax error): compileall
    # names them and goes on, so its status is reported, not taken for a failure.
    done = subprocess.run(
        [sys.executable, "-m", "compileall", "-qq", "-j", "0", *folders],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return {
        "needed": True,
        "folder": str(path),
        "roots": folders,
        "seconds": round(time.monotonic() - started, 1),
        "compileall_status": done.returncode,
    }
