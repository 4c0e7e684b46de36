"""Sandbox backends that run one grader child process with limits.

Every backend shares `run()`: wall-clock timeout, memory limit, scrubbed environment, private
working folder, and at the end the whole process tree killed, including processes that detached
into their own session (they are re-parented to this process, a child subreaper, and reaped).
"""

import contextlib
import ctypes
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.engine.processes import command_name, own_children

_PR_SET_CHILD_SUBREAPER = 36
_CHANNEL_CAP_BYTES = 8 * 1024 * 1024
# Variables a grader child may see. Everything else (secrets, ARENA_HIDDEN_SEED, database and
# broker URLs, cloud credentials) is dropped.
_ENV_PASSTHROUGH = (
    "PATH",
    "LANG",
    "LC_ALL",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "LD_LIBRARY_PATH",
    "CC",
    "CXX",
)


class SandboxError(RuntimeError):
    pass


@dataclass
class Limits:
    timeout_s: float = 300.0
    memory_bytes: int | None = 16 * 1024**3


@dataclass
class Outcome:
    returncode: int | None
    timed_out: bool
    wall_s: float
    messages: list[dict[str, Any]] = field(default_factory=list)
    log_path: Path | None = None
    leftover_processes: int = 0

    def last(self, event: str) -> dict[str, Any] | None:
        found = [m for m in self.messages if m.get("event") == event]
        return found[-1] if found else None


def scrubbed_env(extra: Mapping[str, str], home: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _ENV_PASSTHROUGH if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update({"HOME": str(home), "TMPDIR": str(home / "tmp"), "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra)
    return env


def _become_subreaper() -> None:
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _kill_tree(session_pid: int, known_children: set[int]) -> int:
    """Kill the child's session and every process re-parented to us since it started."""
    killed = 0
    for _ in range(50):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(session_pid, signal.SIGKILL)
        strays = own_children() - known_children
        if not strays:
            break
        for pid in strays:
            try:
                # bwrap's own namespace init may outlive its parent by a moment; it is the
                # sandbox's, not the solution's, and dies with its namespace anyway.
                ours = command_name(pid) == "bwrap"
                os.kill(pid, signal.SIGKILL)
                killed += 0 if ours else 1
            except ProcessLookupError:
                pass
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        time.sleep(0.02)
    return killed


class _ChannelReader(threading.Thread):
    """Reads JSON lines the child writes to its private pipe; stdout is never parsed."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.messages: list[dict[str, Any]] = []

    def run(self) -> None:
        buffer = b""
        total = 0
        with os.fdopen(self.fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                total += len(chunk)
                if total > _CHANNEL_CAP_BYTES:
                    continue
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._accept(line)
        self._accept(buffer)

    def _accept(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, dict):
            # Stamped on arrival by this process: the child cannot forge when it spoke.
            message["received_at"] = time.monotonic()
            self.messages.append(message)


class ProcessSandbox:
    """A child process in its own session with rlimits; no namespaces (see BwrapSandbox)."""

    name = "process"

    def command(self, argv: Sequence[str], workdir: Path, readable: Sequence[Path]) -> list[str]:
        return list(argv)

    def run(
        self,
        argv: Sequence[str],
        *,
        workdir: Path,
        env: Mapping[str, str],
        limits: Limits,
        readable: Sequence[Path] = (),
    ) -> Outcome:
        _become_subreaper()
        (workdir / "tmp").mkdir(parents=True, exist_ok=True)
        log_path = workdir / "child.log"
        read_fd, write_fd = os.pipe()
        child_env = dict(env, ARENA_CHANNEL_FD=str(write_fd))
        known = own_children()
        started = time.monotonic()
        with log_path.open("ab") as log:
            try:
                proc = subprocess.Popen(
                    self.command(argv, workdir, readable),
                    cwd=workdir,
                    env=child_env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(write_fd,),
                    start_new_session=True,
                    preexec_fn=_limit_resources(limits),
                )
            except OSError as exc:
                os.close(read_fd)
                os.close(write_fd)
                raise SandboxError(f"could not start {argv[0]}: {exc}") from exc
        os.close(write_fd)
        reader = _ChannelReader(read_fd)
        reader.start()
        timed_out = False
        try:
            returncode: int | None = proc.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            returncode = None
        wall_s = time.monotonic() - started
        leftovers = _kill_tree(proc.pid, known)
        if returncode is None:
            proc.wait()
        reader.join(timeout=10)
        return Outcome(
            returncode=returncode,
            timed_out=timed_out,
            wall_s=wall_s,
            messages=reader.messages,
            log_path=log_path,
            leftover_processes=leftovers,
        )


class BwrapSandbox(ProcessSandbox):
    """bubblewrap namespaces: no network, PID and IPC namespaces, a private /tmp, and a file
    system made only of the system, Python and the folders named readable, all read-only but
    the working folder. Home folders, the database, the repository and other jobs are absent."""

    name = "bwrap"
    SYSTEM_DIRS = ("/usr", "/etc", "/opt", "/sys", "/run/nvidia-persistenced")
    MERGED_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64")

    def command(self, argv: Sequence[str], workdir: Path, readable: Sequence[Path]) -> list[str]:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise SandboxError(
                "the bwrap sandbox needs bubblewrap installed (apt-get install bubblewrap)"
            )
        private_tmp = "/tmp"  # noqa: S108 - a fresh tmpfs inside the sandbox
        command = [
            bwrap,
            "--die-with-parent",
            "--new-session",
            "--unshare-all",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            private_tmp,
        ]
        command += _system_binds(self.SYSTEM_DIRS, self.MERGED_DIRS)
        for path in sorted({*_python_dirs(), *(Path(p) for p in readable)}):
            if path.exists():
                command += ["--ro-bind", str(path), str(path)]
        for device in sorted(Path("/dev").glob("nvidia*")):
            command += ["--dev-bind", str(device), str(device)]
        # The root itself (and folders bwrap made for the binds) read-only; only the working
        # folder and the private /tmp, separate mounts, stay writable.
        command += ["--remount-ro", "/", "--bind", str(workdir), str(workdir)]
        return [*command, "--chdir", str(workdir), "--", *argv]


def _system_binds(system_dirs: Sequence[str], merged_dirs: Sequence[str]) -> list[str]:
    binds: list[str] = []
    for name in (*system_dirs, *merged_dirs):
        path = Path(name)
        if path.is_symlink():
            # Merged-/usr systems: /bin -> usr/bin and the like stay links inside.
            binds += ["--symlink", os.readlink(path), name]
        elif path.exists():
            binds += ["--ro-bind", name, name]
    return binds


def _python_dirs() -> set[Path]:
    """The interpreter, its standard library and site-packages, wherever they live."""
    dirs = {
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        Path(sys.executable).resolve().parent,
    }
    dirs.update(Path(p).resolve() for p in sys.path if p and "site-packages" in p)
    return {d for d in dirs if not str(d).startswith(("/usr", "/etc"))}


def _limit_resources(limits: Limits) -> Any:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if limits.memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))

    return apply


SANDBOXES: dict[str, type[ProcessSandbox]] = {"process": ProcessSandbox, "bwrap": BwrapSandbox}


def bwrap_usable() -> bool:
    """bubblewrap installed and allowed to create its namespaces on this host."""
    if shutil.which("bwrap") is None:
        return False
    try:
        probe = subprocess.run(
            ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def sandbox_for(name: str) -> ProcessSandbox:
    """A backend by name; "auto" takes bwrap where it works, else a plain process."""
    if name == "auto":
        name = "bwrap" if bwrap_usable() else "process"
    try:
        return SANDBOXES[name]()
    except KeyError:
        choices = ", ".join(["auto", *SANDBOXES])
        raise SandboxError(f"unknown sandbox {name!r}; choose one of {choices}") from None
