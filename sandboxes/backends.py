"""Sandbox backends that run one child process (a grader child or an agent CLI) with limits.

Every backend shares `run()`: wall-clock timeout, memory, pids and CPU limits, scrubbed
environment, private working folder, no network unless hosts are allow-listed (grader/
egress.py), and at the end the whole process tree killed, including processes that detached into
their own session (they are re-parented to this process, a child subreaper, and reaped).
Backends: process and bwrap here, docker in sandboxes/docker.py (loaded only when asked for: it
needs the Docker SDK); `sandbox_for` names them from one explicit table. docs/sandboxes.md.

Untrusted code (a candidate solution, an agent and what it runs) goes only to a backend that
isolates: `sandbox_for` refuses the plain process backend unless the operator turned on the
development switch UNSAFE_SWITCH, because a plain process can read the worker's files and
/proc, reach its database and broker, and write to the host's /dev/shm.
"""

import contextlib
import ctypes
import importlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from sandboxes.egress import RELAY_PORT, EgressError, EgressProxy, proxy_env
from sandboxes.processes import command_name, own_children

_PR_SET_CHILD_SUBREAPER = 36
_CHANNEL_CAP_BYTES = 8 * 1024 * 1024
# How soon a child's supervisor notices that it was asked to stop (Running.wait's `stop`).
STOP_POLL_S = 0.5
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


# The development switch that lets untrusted code run in a plain process (named to be seen in
# any environment listing it is set in).
UNSAFE_SWITCH = "ARENA_UNSAFE_RUN_UNISOLATED"


# Set by the arena in an agent's environment: the agent already runs in an isolating sandbox,
# inside which no other can be made (no capabilities, no new namespaces). Its `check` then runs
# the candidate, the agent's own code, as a plain process beside the agent: the outer sandbox
# is the boundary. The arena grades the final solution again outside, in a sandbox of its own.
INSIDE_SWITCH = "ARENA_INSIDE_SANDBOX"


class SandboxError(RuntimeError):
    pass


def inside_sandbox() -> bool:
    return os.environ.get(INSIDE_SWITCH) == "1"


def unsafe_switch_on() -> bool:
    """The development switch, read as config/env.py reads a yes/no variable; a value that is
    neither stops with the variable's name rather than guess."""
    value = os.environ.get(UNSAFE_SWITCH, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{UNSAFE_SWITCH}={value!r} is not a yes/no value (1/0, true/false, yes/no)")


@dataclass
class Limits:
    timeout_s: float = 300.0
    # Per process address space (RLIMIT_AS) under process and bwrap, and the whole tree's memory
    # where a cgroup can be made; the container's memory under docker.
    memory_bytes: int | None = 16 * 1024**3
    # Also cap each process's address space at memory_bytes (RLIMIT_AS). Off for programs that
    # reserve far more virtual memory than they use (Node-based agent CLIs): their memory is
    # then held by the cgroup or the container alone.
    address_space: bool = True
    # Processes and threads of the whole tree (a cgroup, else RLIMIT_NPROC for a non-root user).
    pids: int | None = 4096
    # CPU cores' worth of time per wall second (a cgroup quota; docker nano_cpus).
    cpus: float | None = None
    # GPUs passed through: -1 all present, 0 none, n the first n (docker device requests).
    gpus: int = -1
    # The uid (and gid) the child runs as, where the worker's own is root: agent CLIs refuse to
    # skip their permission prompts as root. bwrap maps it onto the worker's uid in a user
    # namespace (the working folder stays the worker's); docker runs the container as it.
    user: int | None = None


@dataclass
class Outcome:
    returncode: int | None
    timed_out: bool
    wall_s: float
    messages: list[dict[str, Any]] = field(default_factory=list)
    log_path: Path | None = None
    leftover_processes: int = 0
    # A process of the tree was killed for going over the memory limit.
    memory_exceeded: bool = False

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


# Children this process started and supervises (Running), alive or not yet reaped: never another
# child's strays, though started after it (a prepared child waiting for its job).
_SUPERVISED: set[int] = set()


def supervise(pid: int) -> None:
    """`pid`, a child of this process that outlives the children it helps start (a fork
    server), is never counted as one of their strays."""
    _SUPERVISED.add(pid)


def unsupervise(pid: int) -> None:
    _SUPERVISED.discard(pid)


def _kill_tree(session_pid: int, known_children: set[int]) -> int:
    """Kill the child's session and every process re-parented to us since it started."""
    killed = 0
    for _ in range(50):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(session_pid, signal.SIGKILL)
        strays = own_children() - known_children - (_SUPERVISED - {session_pid})
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


class ChannelReader(threading.Thread):
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


_CGROUP_ROOT = Path("/sys/fs/cgroup")
_CPU_PERIOD_US = 100_000
# Controller -> {file in its cgroup folder: value}.
_Settings = dict[str, dict[str, str]]


def join_cgroups(folders: Iterable[str | os.PathLike[str]]) -> None:
    """This process into each cgroup folder (its pid written in the folder's cgroup.procs): a
    child joins its group's folders between fork and exec, or, forked by the fork server, before
    it runs anything. A folder it cannot join is left: that controller's limit does not hold."""
    for folder in folders:
        with contextlib.suppress(OSError):
            Path(folder, "cgroup.procs").write_text(str(os.getpid()))


class _Cgroup:
    """A cgroup holding the whole tree: pids, memory and CPU limits that add up across
    processes, a count of OOM kills, and a list of members to kill at the end. Made only where
    this process may (root, cgroupfs writable), on cgroup v2 or the v1 hierarchies; elsewhere
    the rlimits alone apply."""

    def __init__(self, limits: Limits, root: Path = _CGROUP_ROOT) -> None:
        # Controller -> its folder, once its limit is written: one folder per controller on
        # v1, the same folder for all on v2. Every folder made, to join and remove.
        self.dirs: dict[str, Path] = {}
        self.made: set[Path] = set()
        # The supervisor's pid in the name: a group whose supervisor is gone can be swept.
        name = f"arena-sandbox-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        if (root / "cgroup.controllers").exists():
            parent = _unified_parent(root, set(_v2_settings(limits)))
            for controller, values in _v2_settings(limits).items():
                self._limit(parent, name, controller, values)
        else:
            for controller, values in _v1_settings(limits).items():
                self._limit(_own_cgroup_dir(root, controller), name, controller, values)

    def _limit(
        self, parent: Path | None, name: str, controller: str, values: dict[str, str]
    ) -> None:
        if parent is None:
            return
        _sweep_stale(parent)
        folder = parent / name
        try:
            folder.mkdir(exist_ok=True)
            self.made.add(folder)
            for key, value in values.items():
                _write_setting(folder / key, value)
        except OSError:
            return
        self.dirs[controller] = folder

    def enforces(self, controller: str) -> bool:
        return controller in self.dirs

    def _folders(self) -> set[Path]:
        return self.made

    def folders(self) -> list[str]:
        """The group's folders, which a child joins by writing its pid in their cgroup.procs."""
        return sorted(str(path) for path in self._folders())

    def join(self) -> None:
        """Runs in the child between fork and exec."""
        join_cgroups(self._folders())

    def members(self) -> set[int]:
        pids: set[int] = set()
        for path in self._folders():
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in (path / "cgroup.procs").read_text().split())
        return pids

    def kill(self) -> None:
        for _ in range(50):
            members = self.members()
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    def oom_killed(self) -> bool:
        path = self.dirs.get("memory")
        if path is None:
            return False
        # v1 counts in memory.oom_control, v2 in memory.events; both as "oom_kill N".
        for counters in ("memory.oom_control", "memory.events"):
            with contextlib.suppress(OSError, ValueError):
                lines = (path / counters).read_text().splitlines()
                counts = dict(line.split() for line in lines if len(line.split()) == 2)
                return int(counts.get("oom_kill", "0")) > 0
        return False

    def remove(self) -> None:
        for path in self._folders():
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    # Members just killed leave the group a moment after they are reaped.
                    time.sleep(0.02)


def _sweep_stale(parent: Path) -> None:
    """Remove empty groups left by supervisors that were killed before they could (a worker
    SIGKILLed mid-run); rmdir refuses any group that still holds a process."""
    for folder in parent.glob("arena-sandbox-*"):
        owner = folder.name.split("-")[2]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                folder.rmdir()


def _write_setting(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        # memory.swap.max is absent without swap accounting: no swap to cap then.
        if path.name != "memory.swap.max":
            raise


def _cpu_quota_us(cpus: float) -> int:
    return max(1000, int(cpus * _CPU_PERIOD_US))


def _v1_settings(limits: Limits) -> _Settings:
    settings: _Settings = {}
    if limits.pids:
        settings["pids"] = {"pids.max": str(limits.pids)}
    if limits.memory_bytes:
        settings["memory"] = {"memory.limit_in_bytes": str(limits.memory_bytes)}
    if limits.cpus:
        settings["cpu"] = {
            "cpu.cfs_period_us": str(_CPU_PERIOD_US),
            "cpu.cfs_quota_us": str(_cpu_quota_us(limits.cpus)),
        }
    return settings


def _v2_settings(limits: Limits) -> _Settings:
    settings: _Settings = {}
    if limits.pids:
        settings["pids"] = {"pids.max": str(limits.pids)}
    if limits.memory_bytes:
        settings["memory"] = {"memory.max": str(limits.memory_bytes), "memory.swap.max": "0"}
    if limits.cpus:
        settings["cpu"] = {"cpu.max": f"{_cpu_quota_us(limits.cpus)} {_CPU_PERIOD_US}"}
    return settings


def _own_cgroup_lines() -> list[tuple[str, str]]:
    """(controllers, path) of this process, from /proc/self/cgroup."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) == 3:
            found.append((fields[1], fields[2]))
    return found


def _own_cgroup_dir(root: Path, controller: str) -> Path | None:
    """This process's folder in the v1 hierarchy of `controller`, if it can make groups there."""
    for controllers, path in _own_cgroup_lines():
        if controller in controllers.split(","):
            folder = root / controller / path.lstrip("/")
            if (folder / "cgroup.procs").exists() and os.access(folder, os.W_OK):
                return folder
    return None


def _unified_parent(root: Path, controllers: set[str]) -> Path | None:
    """A v2 folder whose children get `controllers`: this process's own, or else the root.
    (A v2 group that holds processes cannot hand controllers down, so the own folder often
    fails; the root is exempt from that rule.)"""
    own = [root / path.lstrip("/") for wanted, path in _own_cgroup_lines() if wanted == ""]
    for folder in (*own, root):
        try:
            enabled = set((folder / "cgroup.subtree_control").read_text().split())
            missing = controllers - enabled
            if missing:
                (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))
        except OSError:
            continue
        return folder
    return None


@dataclass
class Egress:
    """What a backend adds to reach allow-listed hosts: a command in front of the child's,
    variables, and host paths to bind in (read-only and writable)."""

    prefix: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    readable: list[Path] = field(default_factory=list)
    writable: list[Path] = field(default_factory=list)


EGRESS_SCRIPT = Path(__file__).resolve().with_name("egress.py")


def namespace_egress(stack: contextlib.ExitStack, allow_hosts: Sequence[str]) -> Egress:
    """The proxy on a Unix socket bound into a sandbox without network, and the relay inside
    (run from its own file with -I, so nothing in the workspace can shadow what it imports)."""
    if not allow_hosts:
        return Egress()
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-egress-")))
    folder.chmod(0o755)
    socket_path = folder / "proxy.sock"
    _start_proxy(stack, allow_hosts, unix_path=socket_path)
    relay = [sys.executable, "-I", str(EGRESS_SCRIPT), "relay", str(socket_path)]
    return Egress(
        prefix=[*relay, str(RELAY_PORT), "--"],
        env=proxy_env(RELAY_PORT),
        readable=[EGRESS_SCRIPT],
        writable=[folder],
    )


def _start_proxy(
    stack: contextlib.ExitStack, allow_hosts: Sequence[str], *, unix_path: Path | None
) -> EgressProxy:
    try:
        return stack.enter_context(EgressProxy(allow_hosts, unix_path=unix_path))
    except (EgressError, OSError) as exc:
        raise SandboxError(f"the egress proxy could not start: {exc}") from None


class ProcessSandbox:
    """A child process in its own session with rlimits; no namespaces (see BwrapSandbox).
    Allow-listed hosts get a proxy, but nothing stops the child from going around it."""

    name = "process"
    # It shares the host's files, network, /proc and /dev/shm with the child.
    isolates = False
    # Its children can be started ahead of their job (start(prepared=True), prepared.py).
    preparable = True

    def command(
        self,
        argv: Sequence[str],
        workdir: Path,
        readable: Sequence[Path],
        *,
        limits: Limits | None = None,
        writable: Sequence[Path] = (),
    ) -> list[str]:
        return list(argv)

    def egress(self, stack: contextlib.ExitStack, allow_hosts: Sequence[str]) -> Egress:
        if not allow_hosts:
            return Egress()
        proxy = _start_proxy(stack, allow_hosts, unix_path=None)
        return Egress(env=proxy_env(proxy.tcp_port))

    def run(
        self,
        argv: Sequence[str],
        *,
        workdir: Path,
        env: Mapping[str, str],
        limits: Limits,
        readable: Sequence[Path] = (),
        allow_hosts: Sequence[str] = (),
    ) -> Outcome:
        """Run argv in workdir until it exits or limits.timeout_s passes; then kill what is left.
        `allow_hosts` ("host:port") are the only places the child may connect to."""
        running = self.start(
            argv,
            workdir=workdir,
            env=env,
            limits=limits,
            readable=readable,
            allow_hosts=allow_hosts,
        )
        return running.wait(limits.timeout_s)

    def start(
        self,
        argv: Sequence[str],
        *,
        workdir: Path,
        env: Mapping[str, str],
        limits: Limits,
        readable: Sequence[Path] = (),
        allow_hosts: Sequence[str] = (),
        prepared: bool = False,
    ) -> "Running":
        """Start argv in the sandbox and return at once. A `prepared` child gets a pipe on its
        stdin and waits on it for one line (its job, see Running.hand); its clock starts then."""
        _become_subreaper()
        (workdir / "tmp").mkdir(parents=True, exist_ok=True)
        stack = contextlib.ExitStack()
        try:
            egress = self.egress(stack, allow_hosts)
            command = self.command(
                [*egress.prefix, *argv],
                workdir,
                [*readable, *egress.readable],
                limits=limits,
                writable=egress.writable,
            )
            cgroup = _Cgroup(limits)
            stack.callback(cgroup.remove)
            return self._spawn(
                command, workdir, {**env, **egress.env}, limits, cgroup, stack, prepared=prepared
            )
        except BaseException:
            stack.close()
            raise

    def _spawn(
        self,
        command: list[str],
        workdir: Path,
        env: Mapping[str, str],
        limits: Limits,
        cgroup: "_Cgroup",
        stack: contextlib.ExitStack,
        *,
        prepared: bool,
    ) -> "Running":
        log_path = workdir / "child.log"
        read_fd, write_fd = os.pipe()
        child_env = dict(env, ARENA_CHANNEL_FD=str(write_fd))
        known = own_children()
        launched = time.monotonic()
        with log_path.open("ab") as log:
            try:
                proc = self._launch(
                    command,
                    workdir,
                    child_env,
                    log.fileno(),
                    write_fd,
                    limits,
                    cgroup,
                    prepared=prepared,
                )
            except OSError as exc:
                os.close(read_fd)
                os.close(write_fd)
                raise SandboxError(f"could not start {command[0]}: {exc}") from exc
        os.close(write_fd)
        _SUPERVISED.add(proc.pid)
        reader = ChannelReader(read_fd)
        reader.start()
        return Running(proc, reader, log_path, known, cgroup, stack, launched)

    def _launch(
        self,
        command: list[str],
        workdir: Path,
        env: Mapping[str, str],
        log: int,
        channel: int,
        limits: Limits,
        cgroup: "_Cgroup",
        *,
        prepared: bool,
    ) -> Any:
        """The child's process (subprocess.Popen, or what supervises as one): its own session,
        `log` as stdout and stderr, the channel's write end, the limits applied before it runs;
        a pipe on stdin for a `prepared` child, else nothing to read."""
        return subprocess.Popen(
            command,
            cwd=workdir,
            env=env,
            stdin=subprocess.PIPE if prepared else subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=(channel,),
            start_new_session=True,
            preexec_fn=_limit_resources(limits, cgroup),
        )


# How often serve() looks for a long-lived child's end of a job.
SERVE_POLL_S = 0.005


class Running:
    """A started child: `wait` supervises it to its end; a prepared one is first handed its job.

    A prepared child has imported what it needs and waits on stdin. Its wall clock, timeout and
    messages start at the hand-over: what it did while waiting is not the job's."""

    def __init__(
        self,
        proc: "subprocess.Popen[bytes]",
        reader: ChannelReader,
        log_path: Path,
        known: set[int],
        cgroup: "_Cgroup",
        stack: contextlib.ExitStack,
        launched: float | None = None,
    ) -> None:
        self.proc, self.reader, self.log_path = proc, reader, log_path
        self.known, self.cgroup, self.stack = known, cgroup, stack
        # Its launch (before the process was asked for), and its job's start (the hand-over
        # for a prepared child).
        self.launched = time.monotonic() if launched is None else launched
        self.started = time.monotonic()
        self.first_message = 0

    def is_prepared(self) -> bool:
        """Whether a prepared child has said it is ready for its job (imports done)."""
        return self.readiness() is not None

    def readiness(self) -> dict[str, Any] | None:
        """A prepared child's "prepared" message (stamped `received_at`), once it came."""
        return next((m for m in list(self.reader.messages) if m.get("event") == "prepared"), None)

    def _job_starts(self) -> None:
        """The job's clock and messages start now, and so does what counts as its strays: a
        process this one started while the child waited (another child, a helper of the
        grading process) was never the child's, though it postdates the child's start."""
        self.known |= own_children()
        self.first_message = len(self.reader.messages)
        self.started = time.monotonic()

    def hand(self, line: str) -> None:
        """Give a prepared child its job (one line) and start its clock."""
        assert self.proc.stdin is not None, "only a prepared child takes a job"
        self._job_starts()
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.close()
        except OSError:  # it died while waiting: wait() reports how
            pass

    def send_ahead(self, line: str) -> int:
        """Give a prepared child a line before its job (a prelude's job, grader/preludes.py):
        stdin stays open for the job, whose clock has not started. Returns the index of the
        first message that can be the prelude's (messages_from)."""
        assert self.proc.stdin is not None, "only a prepared child takes a line"
        first = len(self.reader.messages)
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:  # it died while waiting: the caller sees it gone
            pass
        return first

    def messages_from(self, index: int) -> list[dict[str, Any]]:
        return list(self.reader.messages[index:])

    def wait(self, timeout_s: float, stop: threading.Event | None = None) -> Outcome:
        """Until the child exits, `timeout_s` after its start or hand-over, or another thread
        sets `stop` (the outcome is then neither an exit nor a timeout); then the whole tree is
        killed, nothing of it runs on."""
        deadline = self.started + timeout_s
        returncode: int | None = None
        timed_out = False
        while returncode is None and not timed_out and not (stop is not None and stop.is_set()):
            slice_s = deadline - time.monotonic()
            if stop is not None:
                slice_s = min(slice_s, STOP_POLL_S)
            try:
                returncode = self.proc.wait(timeout=max(0.0, slice_s))
            except subprocess.TimeoutExpired:
                timed_out = time.monotonic() >= deadline
        wall_s = time.monotonic() - self.started
        return self._end(returncode, timed_out, wall_s)

    def serve(
        self,
        line: str,
        timeout_s: float,
        stop: threading.Event | None = None,
        *,
        end_event: str,
    ) -> Outcome:
        """Hand a long-lived child its next job (one line; stdin stays open for the one after)
        and supervise it until it sends `end_event`, whose `code` is the outcome's return code:
        the child runs on. A child that exits, runs past `timeout_s` or is stopped first is
        killed with its tree, and the outcome says so, as wait()'s does."""
        assert self.proc.stdin is not None, "only a prepared child takes a job"
        self._job_starts()
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:  # it died while waiting: wait() reports how
            return self.wait(timeout_s, stop)
        deadline = self.started + timeout_s
        seen = self.first_message
        while True:
            messages = self.reader.messages
            for message in messages[seen:]:
                if message.get("event") == end_event:
                    return self._served(int(message.get("code", 1)))
            seen = len(messages)
            if self.proc.poll() is not None or not self.reader.is_alive():
                # Its last messages may still be in the pipe: read them before judging.
                self.reader.join(timeout=10)
                if any(m.get("event") == end_event for m in self.reader.messages[seen:]):
                    continue
                return self.wait(timeout_s, stop)
            if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
                return self._end(
                    None, time.monotonic() >= deadline, time.monotonic() - self.started
                )
            time.sleep(SERVE_POLL_S)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _served(self, code: int) -> Outcome:
        return Outcome(
            returncode=code,
            timed_out=False,
            wall_s=time.monotonic() - self.started,
            messages=self._job_messages(),
            log_path=self.log_path,
            leftover_processes=0,
            memory_exceeded=False,
        )

    def _job_messages(self) -> list[dict[str, Any]]:
        """The messages since the hand-over, less a prepared child's readiness (the pool's, not
        the job's) and a long-lived child's end of a job (serve's)."""
        return [
            m
            for m in self.reader.messages[self.first_message :]
            if m.get("event") not in ("prepared", "served")
        ]

    def discard(self) -> None:
        """Kill a child that was never handed a job: it ran none, so it has no strays."""
        self.known |= own_children()
        self._end(None, False, 0.0)

    def _end(self, returncode: int | None, timed_out: bool, wall_s: float) -> Outcome:
        self.cgroup.kill()
        leftovers = _kill_tree(self.proc.pid, self.known)
        self.proc.wait()
        _SUPERVISED.discard(self.proc.pid)
        self.reader.join(timeout=10)
        memory_exceeded = self.cgroup.oom_killed()
        self.stack.close()
        return Outcome(
            returncode=returncode,
            timed_out=timed_out,
            wall_s=wall_s,
            messages=self._job_messages(),
            log_path=self.log_path,
            leftover_processes=leftovers,
            memory_exceeded=memory_exceeded,
        )


class BwrapSandbox(ProcessSandbox):
    """bubblewrap namespaces: no network, PID and IPC namespaces, a private /tmp, and a file
    system made only of the system, Python and the folders named readable, all read-only but
    the working folder. Home folders, the database, the repository and other jobs are absent."""

    name = "bwrap"
    isolates = True
    SYSTEM_DIRS = ("/usr", "/opt", "/sys", "/run/nvidia-persistenced")
    MERGED_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64")
    # Only what programs need from /etc: never shadow, ssh keys, sudoers, or tool configs that
    # may hold tokens (pip.conf, npmrc, gitconfig, docker).
    ETC_ENTRIES = (
        "alternatives",
        "bash.bashrc",
        "ca-certificates",
        "ca-certificates.conf",
        "debian_version",
        "gai.conf",
        "glvnd",
        "group",
        "host.conf",
        "hosts",
        "inputrc",
        "ld.so.cache",
        "ld.so.conf",
        "ld.so.conf.d",
        "localtime",
        "magic",
        "mime.types",
        "nsswitch.conf",
        "nvidia",
        "OpenCL",
        "os-release",
        "passwd",
        "profile",
        "protocols",
        "python3",
        "python3.11",
        "services",
        "shells",
        "ssl",
        "terminfo",
        "timezone",
        "vulkan",
    )

    def command(
        self,
        argv: Sequence[str],
        workdir: Path,
        readable: Sequence[Path],
        *,
        limits: Limits | None = None,
        writable: Sequence[Path] = (),
    ) -> list[str]:
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
            # As root, bwrap would keep every capability; the child needs none.
            "--cap-drop",
            "ALL",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            private_tmp,
        ]
        command += _system_binds(self.SYSTEM_DIRS, self.MERGED_DIRS)
        command += _system_binds([f"/etc/{name}" for name in self.ETC_ENTRIES], ())
        for path in sorted({*python_dirs(), *(Path(p) for p in readable)}):
            if path.exists():
                command += ["--ro-bind", str(path), str(path)]
        command += _python_links()
        command += gpu_binds(Path("/dev"), (limits or Limits()).gpus)
        for path in writable:
            command += ["--bind", str(path), str(path)]
        # The root itself (and folders bwrap made for the binds) read-only; only the working
        # folder and the private /tmp, separate mounts, stay writable.
        command += ["--remount-ro", "/", "--bind", str(workdir), str(workdir)]
        user = (limits or Limits()).user
        if user is not None:
            command += ["--unshare-user", "--uid", str(user), "--gid", str(user)]
        return [*command, "--chdir", str(workdir), "--", *argv]

    def egress(self, stack: contextlib.ExitStack, allow_hosts: Sequence[str]) -> Egress:
        return namespace_egress(stack, allow_hosts)


def gpu_binds(dev: Path, gpus: int) -> list[str]:
    """--dev-bind arguments for the NVIDIA device nodes: the control nodes (nvidiactl,
    nvidia-uvm...) whenever a GPU is wanted, and /dev/nvidia<N> for the first `gpus` (-1: all)."""
    if gpus == 0:
        return []
    binds: list[str] = []
    for device in sorted(dev.glob("nvidia*")):
        index = device.name.removeprefix("nvidia")
        if index.isdigit() and gpus >= 0 and int(index) >= gpus:
            continue
        binds += ["--dev-bind", str(device), str(device)]
    return binds


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


def python_dirs() -> set[Path]:
    """The interpreter, its standard library and site-packages, wherever they live."""
    dirs = {
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        Path(sys.executable).resolve().parent,
    }
    dirs.update(Path(p).resolve() for p in sys.path if p and "site-packages" in p)
    return {d for d in dirs if not str(d).startswith(("/usr", "/etc"))}


def _python_links() -> list[str]:
    """The Python environment where this interpreter was started through a link (a `.venv`
    that is a symbolic link, say): its real folder bound again at the linked path too, so that
    the interpreter's own path, and the paths it derives its prefix from, exist inside."""
    binds: list[str] = []
    for path in sorted({Path(sys.prefix), Path(sys.executable).parent}):
        absolute = Path(os.path.abspath(path))
        real = absolute.resolve()
        if real != absolute and real.is_dir():
            binds += ["--ro-bind", str(real), str(absolute)]
    return binds


def rlimits(limits: Limits, cgroup: _Cgroup) -> list[tuple[int, int]]:
    """The rlimits a child of `limits` runs under (resource, soft and hard value)."""
    # RLIMIT_NPROC counts every process of the user, and root is exempt from it: a fallback for
    # a non-root worker where no pids cgroup can be made.
    nproc = limits.pids if not cgroup.enforces("pids") and os.geteuid() != 0 else None
    values = [(resource.RLIMIT_CORE, 0)]
    if limits.memory_bytes and limits.address_space:
        values.append((resource.RLIMIT_AS, limits.memory_bytes))
    if nproc:
        values.append((resource.RLIMIT_NPROC, nproc))
    return values


def _limit_resources(limits: Limits, cgroup: _Cgroup) -> Any:
    values = rlimits(limits, cgroup)

    def apply() -> None:
        cgroup.join()
        for limit, value in values:
            resource.setrlimit(limit, (value, value))

    return apply


class _Entry(NamedTuple):
    module: str
    factory: str
    # For an isolating backend: the function that says why it cannot run on this host, or None.
    probe: str | None
    # Whether the factory and the probe take the image to run in (`image=`).
    takes_image: bool = False

    def options(self, image: str | None) -> dict[str, str | None]:
        return {"image": image} if self.takes_image else {}


# Every backend, by name; "auto" tries the isolating ones in this order. docker's module is
# imported only when docker is asked for or tried: it needs the Docker SDK, which a GPU host
# running only the grader may not have.
_BACKENDS: dict[str, _Entry] = {
    "process": _Entry("sandboxes.backends", "ProcessSandbox", None),
    "bwrap": _Entry("sandboxes.backends", "BwrapSandbox", "bwrap_problem"),
    "docker": _Entry("sandboxes.docker", "DockerSandbox", "docker_problem", takes_image=True),
}
SANDBOXES = tuple(_BACKENDS)


def bwrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox here (not installed, or namespaces refused), or None."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    try:
        probe = subprocess.run(
            ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not be started: {exc}"
    if probe.returncode != 0:
        said = probe.stderr.decode(errors="replace").strip()[:300]
        return f"bubblewrap cannot create its namespaces on this host ({said or probe.returncode})"
    return None


def bwrap_usable() -> bool:
    """bubblewrap installed and allowed to create its namespaces on this host."""
    return bwrap_problem() is None


def sandbox_for(
    name: str, *, allow_unisolated: bool = False, image: str | None = None
) -> ProcessSandbox:
    """The backend for untrusted code. "auto" is the first isolating backend that works here
    (bwrap, then docker); a backend that does not isolate (process) is given only with
    `allow_unisolated`, the operator's development switch (UNSAFE_SWITCH), or inside an agent's
    sandbox (INSIDE_SWITCH). `image`: the docker sandbox's image (its default tag otherwise)."""
    allow_unisolated = allow_unisolated or inside_sandbox()
    if name == "auto" and inside_sandbox():
        # A nested bwrap may pass its probe and still fail to mount /proc: none is tried.
        name = "process"
    if name == "auto":
        name = _first_isolating(allow_unisolated, image)
    backend = _backend(name, image)
    if not backend.isolates and not allow_unisolated:
        raise SandboxError(
            f"the {name} sandbox does not isolate untrusted code (it could read this worker's "
            f"files and /proc and reach its database and broker); use bwrap or docker, or for "
            f"development only set {UNSAFE_SWITCH}=1"
        )
    return backend


def _first_isolating(allow_unisolated: bool, image: str | None) -> str:
    problems: dict[str, str] = {}
    for name, entry in _BACKENDS.items():
        if entry.probe is None:
            continue
        problem = _probe(name, image)
        if problem is None:
            return name
        problems[name] = problem
    if allow_unisolated:
        return "process"
    missing = "; ".join(f"{name}: {problem}" for name, problem in problems.items())
    raise SandboxError(
        f"no isolating sandbox works on this host, so untrusted code is not run ({missing}). "
        f"Install bubblewrap where user namespaces are allowed, or use the docker sandbox with "
        f"the NVIDIA container runtime on a GPU host (docs/sandboxes.md); for development only, "
        f"{UNSAFE_SWITCH}=1 runs it in a plain process"
    )


def _probe(name: str, image: str | None) -> str | None:
    entry = _BACKENDS[name]
    try:
        module = _module(name)
    except SandboxError as exc:
        return str(exc)
    problem: str | None = getattr(module, str(entry.probe))(**entry.options(image))
    return problem


def _module(name: str) -> Any:
    try:
        return importlib.import_module(_BACKENDS[name].module)
    except ImportError as exc:
        raise SandboxError(
            f"the {name} sandbox cannot be loaded here: it needs the Docker SDK "
            f"(pip install docker): {exc}"
        ) from None


def _backend(name: str, image: str | None) -> ProcessSandbox:
    if name not in _BACKENDS:
        choices = ", ".join(["auto", *_BACKENDS])
        raise SandboxError(f"unknown sandbox {name!r}; choose one of {choices}")
    entry = _BACKENDS[name]
    backend: ProcessSandbox = getattr(_module(name), entry.factory)(**entry.options(image))
    return backend
