"""A fork server for the grader's trusted children: the probe's, the judge's and the warm
judge's, which run only the grader and the task's reference, never a solution's code. One server
per grading process and environment imports torch, triton and the grader once; each trusted child
is then forked from it (a few tens of milliseconds) rather than started as an interpreter that
imports them again (1.5-2 s of a core on a 2-core host, 4-6 s on a GPU host whose torch has no
bytecode). The roles that run a solution (candidate, decoy) never come from here: they start in
their own isolating sandbox, from a fresh interpreter.

A forked child is what a cold start would have made: its own session, folder, environment,
descriptors (the job's pipe on stdin, its log on stdout and stderr, its private channel), the
rlimits and the cgroup of its Limits, and the child's own entry point (child._run) with its own
collection and freeze of the imports. The server starts no thread and never makes a CUDA
context, so a fork carries neither a lock held by another thread nor any GPU state. Python's
random module reseeds itself in a forked child.

The child is forked twice (server, then an intermediate that exits at once), so that it is
re-parented to the grading process (a child subreaper, backends): the grading process waits for
it, kills its session and counts its strays exactly as for a child it started itself
(ForkedProcess is the Popen face it is supervised through). A server that cannot start or
answer is let go, and the child starts as a plain interpreter; the grading process says nothing
different either way.
"""

import atexit
import contextlib
import gc
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sandboxes.backends import (
    Limits,
    ProcessSandbox,
    join_cgroups,
    rlimits,
    supervise,
    unsupervise,
)

# What a trusted child's argv starts with: only these are forked.
CHILD_MODULE = "grader.child"
# Variables that differ from one child to the next and are read only once the child runs (its
# folder's): a server serves every child whose other variables are its own.
PER_CHILD = frozenset({"HOME", "TMPDIR", "TORCH_EXTENSIONS_DIR", "ARENA_CHANNEL_FD"})
# How long a server may take to import torch, triton and the grader before it is let go.
READY_TIMEOUT_S = 180.0
# Servers kept per grading process (one per environment: a device, a cache folder); the least
# recently used goes past this (each holds torch's imports: about half a gigabyte).
MAX_SERVERS = 2
# How long a fork may take to be answered (a fork of a process holding torch: milliseconds).
ANSWER_TIMEOUT_S = 30.0
_MESSAGE_BYTES = 1 << 20


class ForkServerError(OSError):
    """The server could not start or fork: the child starts as a plain interpreter."""


class ForkServerLost(ForkServerError):
    """The server was asked to fork and never answered: a child may have been forked with the
    job's descriptors (it ends at once, never given its go-ahead), so none is started again in
    its place; the child's start fails."""


def forkable(command: Sequence[str]) -> bool:
    """Whether `command` is a trusted child's start that a server can fork."""
    return list(command[:3]) == [sys.executable, "-m", CHILD_MODULE]


def server_key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in env.items() if k not in PER_CHILD))


class ForkedProcess:
    """A child forked by a server and re-parented to this process, supervised through the parts
    of subprocess.Popen's face that backends.Running uses: pid, stdin, poll, wait."""

    def __init__(self, pid: int, stdin: Any, args: Sequence[str]) -> None:
        self.pid, self.stdin, self.args = pid, stdin, list(args)
        self.returncode: int | None = None
        self._lock = threading.Lock()
        # Readable once the process has ended (Linux 5.3 on): waits sleep on it, not in turns.
        self._pidfd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self._pidfd = os.pidfd_open(pid)

    def poll(self) -> int | None:
        return self._reap(os.WNOHANG)

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            code = self._reap(0)
            assert code is not None
            return code
        deadline = time.monotonic() + timeout
        while (code := self._reap(os.WNOHANG)) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            pidfd = self._pidfd
            if pidfd is None:
                time.sleep(min(0.005, left))
            else:
                # In slices: another thread that reaps it closes the descriptor, whose number
                # may then name something else.
                with contextlib.suppress(OSError, ValueError):
                    select.select([pidfd], [], [], min(left, 0.5))
        return code

    def _reap(self, flags: int) -> int | None:
        with self._lock:
            if self.returncode is not None:
                return self.returncode
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:
                # Reaped elsewhere (it can only have ended): its status is lost.
                pid, status = self.pid, -1
            if pid == 0:
                return None
            self.returncode = os.waitstatus_to_exitcode(status) if status >= 0 else -9
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
            return self.returncode


class ForkServer:
    """One server process (`python -m grader.forkserver`), spoken to over a socket pair: each
    request is a child's arguments, folder, environment, limits and three descriptors; each
    answer the forked child's pid or why it could not be forked."""

    def __init__(self, env: Mapping[str, str], folder: Path) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            with (folder / "server.log").open("ab") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "grader.forkserver", str(theirs.fileno())],
                    cwd=folder,
                    env={**env, "HOME": str(folder), "TMPDIR": str(folder)},
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(theirs.fileno(),),
                    start_new_session=True,
                )
        except OSError as exc:
            ours.close()
            raise ForkServerError(f"could not start the fork server: {exc}") from exc
        finally:
            theirs.close()
        # Never a child's stray: it outlives every child it forks.
        supervise(self.proc.pid)
        self.folder, self.sock = folder, ours
        self._lock = threading.Lock()
        self._ready = False

    def fork(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        fds: tuple[int, int, int, int],
        cgroups: Sequence[str],
        rlimits: Sequence[tuple[int, int]],
    ) -> int:
        """The pid of a child forked with these arguments (after `-m grader.child`), folder,
        environment and limits; `fds`: its stdin, its log (stdout and stderr), its channel's
        write end and the read end of its go-ahead (see spawn), each duplicated into it."""
        request = {
            "args": list(args),
            "cwd": str(cwd),
            "env": dict(env),
            "cgroups": list(cgroups),
            "rlimits": [list(r) for r in rlimits],
        }
        with self._lock:
            if not self._ready:
                self._expect(READY_TIMEOUT_S)
                self._ready = True
            try:
                socket.send_fds(self.sock, [json.dumps(request).encode()], list(fds))
            except OSError as exc:
                raise ForkServerError(f"the fork server is gone: {exc}") from exc
            try:
                answer = self._expect(ANSWER_TIMEOUT_S)
            except ForkServerError as exc:
                raise ForkServerLost(str(exc)) from exc
        if "pid" not in answer:
            raise ForkServerError(f"the fork server could not fork: {answer.get('error')}")
        return int(answer["pid"])

    def _expect(self, timeout_s: float) -> dict[str, Any]:
        ready, _, _ = select.select([self.sock], [], [], timeout_s)
        data = self.sock.recv(_MESSAGE_BYTES) if ready else b""
        if not data:
            raise ForkServerError("the fork server did not answer")
        return dict(json.loads(data))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        unsupervise(self.proc.pid)
        shutil.rmtree(self.folder, ignore_errors=True)


class _Servers:
    """This process's servers, one per environment (server_key), started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[tuple[tuple[str, str], ...], ForkServer] = {}

    def server(self, env: Mapping[str, str]) -> ForkServer:
        key = server_key(env)
        with self._lock:
            server = self._servers.pop(key, None)
            if server is not None and not server.alive():
                server.close()
                server = None
            if server is None:
                server = ForkServer(env, _server_folder())
            self._servers[key] = server  # the most recently used last
            evicted = list(self._servers)[:-MAX_SERVERS]
            gone = [self._servers.pop(k) for k in evicted]
        for old in gone:
            old.close()
        return server

    def let_go(self, server: ForkServer) -> None:
        with self._lock:
            self._servers = {k: s for k, s in self._servers.items() if s is not server}
        server.close()

    def close(self) -> None:
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.close()

    def forget(self) -> None:
        """In a process forked from this one: the servers are the parent's, to speak to and
        end; this process starts its own."""
        self._lock = threading.Lock()
        for server in self._servers.values():
            with contextlib.suppress(OSError):
                server.sock.close()
        self._servers = {}


def _server_folder() -> Path:
    from grader.scratch import new_private_folder, scratch_root

    return new_private_folder("arena-forkserver", root=scratch_root(None))


SERVERS = _Servers()
atexit.register(lambda: SERVERS.close())
os.register_at_fork(after_in_child=lambda: SERVERS.forget())


def spawn(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int,
    log: int,
    channel: int,
    cgroups: Sequence[str],
    rlimits: Sequence[tuple[int, int]],
) -> int:
    """A trusted child's pid, forked by this process's server for `env` (see module doc). The
    child waits for a go-ahead, given once its pid is known here: a child forked for a request
    whose answer was lost (ForkServerLost) ends without running anything."""
    server = SERVERS.server(env)
    go_read, go_write = os.pipe()
    try:
        pid = server.fork(
            command[3:],
            cwd=cwd,
            env=env,
            fds=(stdin, log, channel, go_read),
            cgroups=cgroups,
            rlimits=rlimits,
        )
        os.write(go_write, b"1")
        return pid
    except ForkServerError:
        SERVERS.let_go(server)
        raise
    finally:
        os.close(go_read)
        os.close(go_write)


class TrustedSandbox(ProcessSandbox):
    """The plain process backend for the trusted roles, whose children a server forks where it
    can (forkable commands); anything else, or a server that fails, starts as ProcessSandbox
    starts it."""

    def _launch(
        self,
        command: list[str],
        workdir: Path,
        env: Mapping[str, str],
        log: int,
        channel: int,
        limits: Limits,
        cgroup: Any,
        *,
        prepared: bool,
    ) -> Any:
        if not forkable(command):
            return super()._launch(
                command, workdir, env, log, channel, limits, cgroup, prepared=prepared
            )
        stdin_read, stdin_write = os.pipe() if prepared else (os.open(os.devnull, os.O_RDONLY), -1)
        try:
            pid = spawn(
                command,
                cwd=workdir,
                env=env,
                stdin=stdin_read,
                log=log,
                channel=channel,
                cgroups=cgroup.folders(),
                rlimits=rlimits(limits, cgroup),
            )
        except ForkServerError as exc:
            if stdin_write >= 0:
                os.close(stdin_write)
            if isinstance(exc, ForkServerLost):
                # Not started again: this child's descriptors went to one that may exist.
                raise
            return super()._launch(
                command, workdir, env, log, channel, limits, cgroup, prepared=prepared
            )
        finally:
            os.close(stdin_read)
        stdin = os.fdopen(stdin_write, "wb") if stdin_write >= 0 else None
        return ForkedProcess(pid, stdin, command)


# The server's side.


def serve(fd: int) -> int:
    sock = socket.socket(fileno=fd)
    # What a trusted child imports before its first job (child.py's own imports, with the
    # collector off): forked children share them.
    import grader.child  # noqa: F401

    gc.collect()
    gc.freeze()
    sock.send(json.dumps({"ready": True}).encode())
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, _MESSAGE_BYTES, 4)
        except OSError:
            return 0
        if not message:  # the grading process let go of it
            return 0
        try:
            answer: dict[str, Any] = {"pid": _fork(json.loads(message), fds, sock)}
        except Exception as exc:  # an answer, whatever happened: the grading process waits
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for received in fds:
                with contextlib.suppress(OSError):
                    os.close(received)
        sock.send(json.dumps(answer).encode())


def _fork(request: dict[str, Any], fds: list[int], sock: socket.socket) -> int:
    if len(fds) != 4:
        raise ValueError(f"a child needs four descriptors, not {len(fds)}")
    read_end, write_end = os.pipe()
    first = os.fork()
    if first == 0:  # the intermediate: forks the child, says its pid and goes at once
        try:
            os.close(read_end)
            second = os.fork()
            if second == 0:
                os.close(write_end)
                _become_child(request, fds, sock)
            os.write(write_end, str(second).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read()
    # Reaped before the answer: the child is re-parented by the time the grading process hears
    # of it, and waits for it as its own.
    os.waitpid(first, 0)
    if not said:
        raise OSError("the child could not be forked")
    return int(said)


def _become_child(request: dict[str, Any], fds: list[int], sock: socket.socket) -> None:
    """Never returns: the child's start as a cold one's (backends' Popen), then its run."""
    import resource
    import tempfile

    try:
        sock.close()
        stdin, log, channel, go_ahead = fds
        # Nothing runs before the grading process has heard of this child: one it gave up on
        # (its answer lost) reads the end of the pipe and goes.
        if os.read(go_ahead, 1) != b"1":
            os._exit(0)
        os.close(go_ahead)
        os.setsid()
        join_cgroups(request["cgroups"])
        for limit, value in request["rlimits"]:
            resource.setrlimit(limit, (value, value))
        os.dup2(stdin, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        # Every descriptor but the three standard ones and the channel goes.
        os.closerange(3, channel)
        os.closerange(channel + 1, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        env = dict(request["env"], ARENA_CHANNEL_FD=str(channel))
        os.environ.clear()
        os.environ.update(env)
        # What the interpreter reads from its environment only at start.
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
        tempfile.tempdir = None
        sys.argv = [sys.modules["grader.child"].__file__ or "", *request["args"]]
    except BaseException as exc:
        with contextlib.suppress(Exception):
            os.write(2, f"the fork server could not start the child: {exc}\n".encode())
        os._exit(127)
    child = sys.modules["grader.child"]
    # Its imports are the server's: its start is the fork (launch.start_report).
    child.START_MARKS.clear()
    child.START_MARKS["forked"] = time.monotonic()
    child._end(child._run([CHILD_MODULE, *request["args"]]))


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
