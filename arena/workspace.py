"""An agent's workspace: the task's visible files, a `check` command, and nothing else.

What goes in: reference.py, PROMPT.md, the starter kernel (starter/...) and `check`, which runs
the grader on the visible shapes (arena/workspace_check.py). What never goes in: task.toml (its
generalization rules stay with the grader), sota.py, other tasks, the database, credentials.
The files put in are protected: hashed when the workspace is built and again after the agent
stops, so a run that rewrote its reference or its check is flagged. After the run only the
solution files are copied out, and they are graded again by the trusted grader elsewhere.

No Django here: the GPU recording script (bench/demo_gpu.py) builds workspaces on a host that
has only Python, torch and triton.
"""

import errno
import hashlib
import json
import math
import os
import stat
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHECK_SOURCE = Path(__file__).resolve().parent / "workspace_check.py"
PROJECT_ROOT = Path(__file__).resolve().parent.parent
VISIBLE_FILES = ("reference.py", "PROMPT.md")
STARTER_DIR = "starter"
CHECK_NAME = "check"
SOLUTION_FILES = ("solution.py",)
# A solution is source code; anything larger is not a kernel but an attempt to fill the disk
# or the database.
MAX_SOLUTION_BYTES = 512 * 1024
MAX_STARTER_FILES = 50
# Manifest keys the agent may not see; everything else in task.toml is in PROMPT.md anyway.
HIDDEN_MANIFEST_KEYS = ("generalization",)


class WorkspaceError(Exception):
    """A workspace that cannot be built or collected; the message names the file."""


@dataclass(frozen=True)
class Workspace:
    root: Path
    task_slug: str
    # Relative path -> sha256 of every file put in, taken when the workspace was built.
    protected: dict[str, str] = field(default_factory=dict)


def workspace_build(*, task_folder: Path, root: Path, python: str | None = None) -> Workspace:
    """Fill the empty folder `root` with the visible files of the task in `task_folder`."""
    task_folder = Path(task_folder).resolve()
    manifest = _read_manifest(task_folder)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise WorkspaceError(f"{root}: the workspace folder is not empty")
    for name in VISIBLE_FILES:
        _copy_regular(task_folder / name, root / name)
    _copy_starter(task_folder / STARTER_DIR, root / STARTER_DIR)
    check = root / CHECK_NAME
    check.write_text(check_script(manifest=manifest, python=python or sys.executable))
    check.chmod(0o755)
    return Workspace(
        root=root,
        task_slug=str(manifest.get("slug", task_folder.name)),
        protected=workspace_protected_hashes(root=root),
    )


def _read_manifest(task_folder: Path) -> dict[str, Any]:
    path = task_folder / "task.toml"
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise WorkspaceError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise WorkspaceError(f"{path}: not valid TOML: {exc}") from None


def _copy_regular(source: Path, target: Path) -> None:
    if not source.exists() and not source.is_symlink():
        raise WorkspaceError(f"{source}: file not found")
    if source.is_symlink() or not source.is_file():
        raise WorkspaceError(f"{source}: not a regular file")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    target.chmod(0o644)


def _copy_starter(source: Path, target: Path) -> None:
    if not source.is_dir():
        return
    files = sorted(
        p
        for p in source.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )
    if len(files) > MAX_STARTER_FILES:
        raise WorkspaceError(f"{source}: more than {MAX_STARTER_FILES} starter files")
    for path in files:
        _copy_regular(path, target / path.relative_to(source))


def check_script(*, manifest: dict[str, Any], python: str) -> str:
    """The `check` script: workspace_check.py with the visible manifest and grader filled in."""
    visible = {k: v for k, v in manifest.items() if k not in HIDDEN_MANIFEST_KEYS}
    source = CHECK_SOURCE.read_text(encoding="utf-8")
    filled = {"VISIBLE_TASK_TOML": toml_dumps(visible), "PROJECT_ROOT": str(PROJECT_ROOT)}
    for name, value in filled.items():
        placeholder = f'{name} = ""\n'
        if placeholder not in source:
            raise WorkspaceError(f"{CHECK_SOURCE}: the line {placeholder.strip()!r} is missing")
        source = source.replace(placeholder, f"{name} = {json.dumps(value)}\n", 1)
    return f"#!{python}\n{source}"


def toml_dumps(data: dict[str, Any]) -> str:
    """TOML for a parsed manifest: scalars and arrays first, then one [table] per sub-table."""
    lines = [
        f"{_toml_key(k)} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)
    ]
    for key, table in data.items():
        if isinstance(table, dict):
            lines.append(f"\n[{_toml_key(key)}]")
            lines.extend(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return json.dumps(value)  # JSON's string escapes are all valid TOML basic-string ones
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise WorkspaceError(f"task.toml: a value of type {type(value).__name__} cannot be written")


def workspace_protected_hashes(*, root: Path) -> dict[str, str]:
    """sha256 of every file in the workspace but the solution files, by relative path."""
    hashes = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative in SOLUTION_FILES or "__pycache__" in path.parts or path.is_dir():
            continue
        hashes[relative] = _file_digest(path)
    return hashes


def _file_digest(path: Path) -> str:
    """A file's sha256; a link or special file gets a marker that never equals a digest."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "symlink"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def workspace_changed_protected(*, workspace: Workspace) -> list[str]:
    """The protected files the agent changed, replaced or deleted, sorted."""
    return sorted(
        relative
        for relative, digest in workspace.protected.items()
        if _file_digest(workspace.root / relative) != digest
    )


def workspace_collect(*, workspace: Workspace, dest: Path) -> dict[str, str]:
    """Copy the solution files out into `dest`; name -> text. Nothing else leaves."""
    collected = {}
    for name in SOLUTION_FILES:
        collected[name] = _read_solution(workspace.root / name)
    dest.mkdir(parents=True, exist_ok=True)
    for name, text in collected.items():
        (dest / name).write_text(text, encoding="utf-8")
    return collected


def _read_solution(path: Path) -> str:
    """The solution's text, refusing links (to a host secret) and huge or binary files."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise WorkspaceError(f"{path.name}: not found in the workspace") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WorkspaceError(f"{path.name}: a symbolic link, not a file") from None
        raise WorkspaceError(f"{path.name}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise WorkspaceError(f"{path.name}: not a regular file")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_SOLUTION_BYTES + 1)
    if len(data) > MAX_SOLUTION_BYTES:
        raise WorkspaceError(f"{path.name}: larger than {MAX_SOLUTION_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorkspaceError(f"{path.name}: not UTF-8 text (byte {exc.start})") from None
