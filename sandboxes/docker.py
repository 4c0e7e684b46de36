"""The docker sandbox: one container per run, from the image `make sandbox-image` builds.

The same contract as sandboxes.backends.ProcessSandbox.run: network none (allow-listed
hosts through the parent's proxy on a bound Unix socket), a read-only root with a private /tmp,
the working folder the only writable bind, all capabilities dropped, memory, pids and CPU limits
from `Limits`, GPUs through device requests, and a wall-clock timeout after which the container
is killed. The container's end kills every process in it, detached or not. The private result
channel is a FIFO bound in and opened as descriptor 3, never stdout.
"""

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import docker
import requests
from docker.models.containers import Container
from docker.types import DeviceRequest, LogConfig, Mount

from sandboxes.backends import (
    ChannelReader,
    Limits,
    Outcome,
    ProcessSandbox,
    Running,
    SandboxError,
    namespace_egress,
)

DEFAULT_IMAGE = "kernel-arena-sandbox:full"
INTERPRETER_LABEL = "kernel-arena.prefix"
CHANNEL_DIR = "/run/arena"
CHANNEL_FD = 3
LOG_CAP_BYTES = 8 * 1024 * 1024
TMPFS_OPTIONS = "rw,nosuid,nodev,size=1g"
_API_TIMEOUT_S = 120


def docker_usable() -> bool:
    """A Docker engine answers on this host."""
    try:
        docker.from_env(timeout=5).ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException):
        return False
    return True


def docker_problem(image: str | None = None) -> str | None:
    """Why the docker sandbox cannot run here (no engine, no `image`), or None."""
    if not docker_usable():
        return "no Docker engine answers on this host"
    image = DockerSandbox(image=image).image
    try:
        docker.from_env(timeout=5).images.get(image)
    except docker.errors.ImageNotFound:
        return f"the sandbox image {image} is missing (make sandbox-image)"
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return f"the Docker engine failed: {exc}"
    return None


def device_requests(gpus: int, *, host_has_gpu: bool) -> list[DeviceRequest]:
    """GPUs for the container: -1 every GPU present, 0 none, n the first n."""
    if gpus == 0 or (gpus < 0 and not host_has_gpu):
        return []
    if not host_has_gpu:
        raise SandboxError(f"{gpus} GPU(s) asked for, but this host has no NVIDIA GPU")
    return [DeviceRequest(count=gpus, capabilities=[["gpu"]])]


def _interpreter_under_tmp() -> list[Path]:
    """The image holds the interpreter at its host path, but a checkout under /tmp would sit
    beneath the container's private /tmp and vanish: such prefixes are bound over it, read-only."""
    tmp = Path("/tmp")  # noqa: S108 - compared against, never written
    prefixes = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    return sorted(p for p in prefixes if p.is_relative_to(tmp))


def check_interpreter(labels: Mapping[str, str] | None, image: str) -> None:
    """The image must hold this checkout's Python environment at its host path (build.sh labels
    it with sys.prefix), unless that environment is bound in from /tmp. An image built for
    another checkout would otherwise fail inside the container with a bare "not found"."""
    built_for = (labels or {}).get(INTERPRETER_LABEL)
    if not built_for or built_for == sys.prefix or _interpreter_under_tmp():
        return
    raise SandboxError(
        f"the sandbox image {image} holds the Python environment {built_for}, not this "
        f"checkout's {sys.prefix}: rebuild it here with `make sandbox-image`"
    )


def _container_user(limits: Limits) -> str:
    """The worker's own uid, or `limits.user` where the worker is root (the working folder is
    handed to that user before the container starts, see _hand_over)."""
    if limits.user is not None and os.getuid() == 0:
        return f"{limits.user}:{limits.user}"
    return f"{os.getuid()}:{os.getgid()}"


def _hand_over(workdir: Path, limits: Limits) -> None:
    if limits.user is None or os.getuid() != 0:
        return
    for folder, dirs, files in os.walk(workdir):
        for name in [folder, *(os.path.join(folder, n) for n in (*dirs, *files))]:
            os.chown(name, limits.user, limits.user, follow_symlinks=False)


def _bind(path: Path, *, read_only: bool) -> Mount:
    return Mount(target=str(path), source=str(path), type="bind", read_only=read_only)


class DockerSandbox(ProcessSandbox):
    name = "docker"
    isolates = True
    # A container is started per job (run() below), never ahead of it.
    preparable = False

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
    ) -> Running:
        # The process backend's start() would run argv on the host, outside any container.
        raise SandboxError("the docker sandbox starts a container per job: use run()")

    def __init__(self, image: str | None = None) -> None:
        # A deployment names its image (ARENA_SANDBOX_IMAGE); else the tag `make sandbox-image`
        # also writes.
        self.image = image or DEFAULT_IMAGE

    def container_options(
        self,
        argv: Sequence[str],
        *,
        workdir: Path,
        env: Mapping[str, str],
        limits: Limits,
        readable: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        channel_dir: Path,
        host_has_gpu: bool,
    ) -> dict[str, Any]:
        """The keyword arguments of containers.run for one sandboxed command."""
        readable = [*readable, *_interpreter_under_tmp()]
        mounts = [_bind(Path(p), read_only=True) for p in sorted(set(readable)) if Path(p).exists()]
        mounts += [_bind(Path(p), read_only=False) for p in writable]
        mounts.append(_bind(workdir, read_only=False))
        # A FIFO needs no write permission on its folder: the channel's stays read-only.
        mounts.append(
            Mount(target=CHANNEL_DIR, source=str(channel_dir), type="bind", read_only=True)
        )
        options: dict[str, Any] = {
            "image": self.image,
            # Open the channel as descriptor 3 first, then become the command.
            "command": [
                "/bin/sh",
                "-c",
                f'exec {CHANNEL_FD}>"$0" && exec "$@"',
                f"{CHANNEL_DIR}/channel",
                *argv,
            ],
            "environment": {**env, "ARENA_CHANNEL_FD": str(CHANNEL_FD)},
            "working_dir": str(workdir),
            "user": _container_user(limits),
            "network_mode": "none",
            "read_only": True,
            "tmpfs": {"/tmp": TMPFS_OPTIONS},  # noqa: S108 - a private tmpfs inside
            "mounts": mounts,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "ipc_mode": "private",
            "device_requests": device_requests(limits.gpus, host_has_gpu=host_has_gpu),
            "log_config": LogConfig(type="json-file", config={"max-size": "10m", "max-file": "1"}),
            "labels": {"kernel-arena.sandbox": "1"},
        }
        if limits.memory_bytes:
            # Equal limits: no swap to spill into.
            options["mem_limit"] = options["memswap_limit"] = limits.memory_bytes
        if limits.pids:
            options["pids_limit"] = limits.pids
        if limits.cpus:
            options["nano_cpus"] = int(limits.cpus * 1e9)
        return options

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
        (workdir / "tmp").mkdir(parents=True, exist_ok=True)
        _hand_over(workdir, limits)
        with contextlib.ExitStack() as stack:
            egress = namespace_egress(stack, allow_hosts)
            channel_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-ch-")))
            channel_dir.chmod(0o755)
            read_fd, keep_open_fd = _open_fifo(channel_dir / "channel")
            stack.callback(_close_quietly, keep_open_fd)
            reader = ChannelReader(read_fd)
            reader.start()
            options = self.container_options(
                [*egress.prefix, *argv],
                workdir=workdir,
                env={**env, **egress.env},
                limits=limits,
                readable=[*readable, *egress.readable],
                writable=egress.writable,
                channel_dir=channel_dir,
                host_has_gpu=Path("/dev/nvidia0").exists(),
            )
            outcome = self._run_container(options, limits, workdir / "child.log")
            # The container is gone: no writer is left but ours, so the reader ends with it.
            _close_quietly(keep_open_fd)
            reader.join(timeout=10)
            outcome.messages = reader.messages
            return outcome

    def _run_container(self, options: dict[str, Any], limits: Limits, log_path: Path) -> Outcome:
        with contextlib.closing(_client()) as client:
            try:
                return self._supervise_container(client, options, limits, log_path)
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                raise SandboxError(f"the docker engine failed during the run: {exc}") from None

    def _supervise_container(
        self, client: docker.DockerClient, options: dict[str, Any], limits: Limits, log_path: Path
    ) -> Outcome:
        started = time.monotonic()
        container = _start(client, options)
        try:
            returncode, timed_out = _wait(container, limits.timeout_s)
            wall_s = time.monotonic() - started
            with contextlib.suppress(docker.errors.APIError):
                container.kill()
            container.wait(timeout=_API_TIMEOUT_S)
            container.reload()
            _save_logs(container, log_path)
            return Outcome(
                returncode=returncode,
                timed_out=timed_out,
                wall_s=wall_s,
                log_path=log_path,
                memory_exceeded=bool(container.attrs["State"].get("OOMKilled")),
            )
        finally:
            with contextlib.suppress(docker.errors.APIError):
                container.remove(force=True)


def _client() -> docker.DockerClient:
    try:
        return docker.from_env(timeout=_API_TIMEOUT_S)
    except docker.errors.DockerException as exc:
        raise SandboxError(f"the docker sandbox needs a running Docker engine: {exc}") from None


def _start(client: docker.DockerClient, options: dict[str, Any]) -> Container:
    """Create (never pull: no registry is reachable, and a missing image is a setup error),
    then start."""
    image = options["image"]
    try:
        check_interpreter(client.images.get(image).labels, image)
        container = client.containers.create(**options)
    except docker.errors.ImageNotFound:
        raise SandboxError(
            f"the sandbox image {image} is missing: build it with `make sandbox-image`"
        ) from None
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"the container could not be created: {exc}") from None
    try:
        container.start()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        with contextlib.suppress(docker.errors.APIError):
            container.remove(force=True)
        raise SandboxError(f"the container could not start: {exc}") from None
    return container


def _wait(container: Container, timeout_s: float) -> tuple[int | None, bool]:
    started = time.monotonic()
    try:
        status = container.wait(timeout=timeout_s)
    except requests.exceptions.ReadTimeout:
        return None, True
    except requests.exceptions.ConnectionError:
        # Some SDK versions report the read timeout as a connection error; an engine that
        # went away early is a failure, not a timeout.
        if time.monotonic() - started < timeout_s * 0.99:
            raise
        return None, True
    return int(status["StatusCode"]), False


def _save_logs(container: Container, log_path: Path) -> None:
    """stdout and stderr, capped: the child may print without end."""
    written = 0
    with log_path.open("ab") as log:
        for chunk in container.logs(stream=True, stdout=True, stderr=True):
            if written >= LOG_CAP_BYTES:
                break
            log.write(chunk[: LOG_CAP_BYTES - written])
            written += len(chunk)


def _open_fifo(path: Path) -> tuple[int, int]:
    """The read end, and a write end held open so that the read end sees no end of file before
    the container has opened (and closed) its own."""
    os.mkfifo(path, 0o622)
    # mkfifo's mode passes through the umask: a container of another uid must still write.
    os.chmod(path, 0o622)  # noqa: S103 - write-only for others; only the container opens it
    read_fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    keep_open_fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    os.set_blocking(read_fd, True)
    return read_fd, keep_open_fd


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
