"""How each backend is asked for what it enforces: GPUs, limits, mounts, and the registry.
No GPU is here, so GPU passthrough is checked on the arguments handed to bwrap and Docker."""

import io
import itertools
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from docker.types import DeviceRequest

from sandboxes import docker as docker_sandbox
from sandboxes.backends import (
    BwrapSandbox,
    Limits,
    SandboxError,
    _Cgroup,
    bwrap_usable,
    gpu_binds,
    sandbox_for,
)
from sandboxes.docker import DockerSandbox, check_interpreter, device_requests
from tests.sandbox.conftest import REPO


@pytest.fixture
def fake_dev(tmp_path):
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-caps", "null"):
        (tmp_path / name).touch()
    return tmp_path


def bound(arguments: list[str]) -> set[str]:
    return {Path(a).name for flag, a in itertools.pairwise(arguments) if flag == "--dev-bind"}


def test_bwrap_binds_every_gpu_by_default(fake_dev):
    assert bound(gpu_binds(fake_dev, -1)) == {
        "nvidia0",
        "nvidia1",
        "nvidiactl",
        "nvidia-uvm",
        "nvidia-caps",
    }


def test_bwrap_binds_the_first_n_gpus_and_the_control_nodes(fake_dev):
    assert bound(gpu_binds(fake_dev, 1)) == {"nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-caps"}


def test_bwrap_binds_no_gpu_when_none_is_asked_for(fake_dev):
    assert gpu_binds(fake_dev, 0) == []


def test_bwrap_command_drops_network_capabilities_and_most_of_etc(tmp_path):
    command = BwrapSandbox().command(["true"], tmp_path, [], limits=Limits(gpus=0))
    assert "--unshare-all" in command and "--share-net" not in command
    assert command[command.index("--cap-drop") + 1] == "ALL"
    etc = {a for a in command if a.startswith("/etc")}
    assert "/etc/ld.so.cache" in etc
    assert not {"/etc", "/etc/shadow", "/etc/ssh", "/etc/sudoers", "/etc/pip.conf"} & etc


def test_docker_asks_for_all_gpus_with_a_device_request():
    [request] = device_requests(-1, host_has_gpu=True)
    assert request == DeviceRequest(count=-1, capabilities=[["gpu"]])


def test_docker_asks_for_a_count_of_gpus():
    [request] = device_requests(2, host_has_gpu=True)
    assert request["Count"] == 2 and request["Capabilities"] == [["gpu"]]


def test_docker_asks_for_no_gpu_when_none_is_wanted_or_present():
    assert device_requests(0, host_has_gpu=True) == []
    assert device_requests(-1, host_has_gpu=False) == []


def test_docker_refuses_gpus_a_host_does_not_have():
    with pytest.raises(SandboxError, match="no NVIDIA GPU"):
        device_requests(1, host_has_gpu=False)


def container_options(tmp_path, limits):
    return DockerSandbox(image="example:tag").container_options(
        ["python", "x.py"],
        workdir=tmp_path,
        env={"PATH": "/usr/bin"},
        limits=limits,
        readable=[REPO / "grader", tmp_path / "missing"],
        channel_dir=tmp_path,
        host_has_gpu=True,
    )


def test_docker_container_has_no_network_a_read_only_root_and_no_capabilities(tmp_path):
    options = container_options(tmp_path, Limits())
    assert options["network_mode"] == "none"
    assert options["read_only"] is True
    assert options["cap_drop"] == ["ALL"]
    assert "no-new-privileges" in options["security_opt"]
    mounts = {m["Target"]: m["ReadOnly"] for m in options["mounts"]}
    assert mounts[str(REPO / "grader")] is True
    assert mounts[str(tmp_path)] is False
    assert str(tmp_path / "missing") not in mounts


def test_docker_container_carries_the_limits(tmp_path):
    limits = Limits(memory_bytes=2 * 1024**3, pids=128, cpus=1.5, gpus=1)
    options = container_options(tmp_path, limits)
    assert options["mem_limit"] == options["memswap_limit"] == 2 * 1024**3
    assert options["pids_limit"] == 128
    assert options["nano_cpus"] == 1_500_000_000
    assert options["device_requests"][0]["Count"] == 1


def test_an_agent_container_holds_the_agent_memory_setting(tmp_path, settings):
    from arena.runs import agent_limits

    settings.ARENA_AGENT_MEMORY_MB = 4096
    limits = agent_limits(wall_clock_s=60)
    assert (limits.timeout_s, limits.address_space) == (60, False)
    options = container_options(tmp_path, limits)
    assert options["mem_limit"] == options["memswap_limit"] == 4 * 1024**3
    settings.ARENA_AGENT_MEMORY_MB = 0
    assert "mem_limit" not in container_options(tmp_path, agent_limits(wall_clock_s=60))


def test_docker_container_without_limits_asked_sets_none(tmp_path):
    options = container_options(tmp_path, Limits(memory_bytes=None, pids=None, gpus=0))
    assert not {"mem_limit", "pids_limit", "nano_cpus"} & set(options)
    assert options["device_requests"] == []


def test_docker_reports_a_missing_image_clearly(tmp_path, request):
    from tests.sandbox.conftest import _docker_usable

    if not _docker_usable():
        pytest.skip("no Docker engine answers here")
    sandbox = DockerSandbox(image="kernel-arena-sandbox:does-not-exist")
    with pytest.raises(SandboxError, match="make sandbox-image"):
        sandbox.run(["true"], workdir=tmp_path, env={}, limits=Limits(timeout_s=10))


def test_docker_refuses_an_image_built_for_another_checkouts_python(tmp_path, monkeypatch):
    from tests.sandbox.conftest import _docker_usable

    if not _docker_usable():
        pytest.skip("no Docker engine answers here")
    import docker

    # As from a checkout outside /tmp, whose environment is not bound into the container.
    monkeypatch.setattr(docker_sandbox, "_interpreter_under_tmp", list)

    client = docker.from_env()
    image = "kernel-arena-sandbox:test-other-prefix"
    # An empty root filesystem, labelled the way build.sh labels a full image built elsewhere.
    empty = io.BytesIO()
    tarfile.open(fileobj=empty, mode="w").close()
    client.api.import_image_from_data(
        empty.getvalue(), repository=image, changes=["LABEL kernel-arena.prefix=/elsewhere/.venv"]
    )
    try:
        sandbox = DockerSandbox(image=image)
        with pytest.raises(SandboxError, match=r"holds the Python environment /elsewhere/\.venv"):
            sandbox.run(["true"], workdir=tmp_path, env={}, limits=Limits(timeout_s=10))
    finally:
        client.images.remove(image, force=True)


def test_an_image_for_this_checkouts_python_or_without_a_label_is_accepted():
    check_interpreter({"kernel-arena.prefix": sys.prefix}, "img")
    check_interpreter({}, "img")
    check_interpreter(None, "img")


def test_sandbox_for_resolves_docker_from_the_registry_alone():
    # A fresh interpreter that imported nothing but the registry: no registration is needed.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from sandboxes.backends import sandbox_for\n"
            "print(type(sandbox_for('docker', image='img:tag')).__name__)\n"
            "print(sandbox_for('docker', image='img:tag').image)",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["DockerSandbox", "img:tag"]


def test_a_host_without_the_docker_sdk_is_told_what_docker_needs():
    # A grader host with only torch installed: importing the Docker SDK fails there.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nsys.modules['docker'] = None\n"
            "from sandboxes.backends import sandbox_for\nsandbox_for('docker')",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert probe.returncode != 0
    assert "SandboxError" in probe.stderr and "Docker SDK" in probe.stderr


def test_unknown_backends_are_named_with_the_choices():
    with pytest.raises(SandboxError, match="choose one of auto, process, bwrap"):
        sandbox_for("chroot")


def test_on_cgroup_v2_the_limits_are_written_to_one_group(tmp_path):
    # A stand-in for a v2 mount: the same files the kernel exposes, as plain files.
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    cgroup = _Cgroup(Limits(memory_bytes=2**30, pids=64, cpus=0.5), root=tmp_path)
    [folder] = {cgroup.dirs[c] for c in ("pids", "memory", "cpu")}
    assert folder.parent == tmp_path and folder.name.startswith("arena-sandbox-")
    written = {f.name: f.read_text() for f in folder.iterdir()}
    assert written == {
        "pids.max": "64",
        "memory.max": str(2**30),
        "memory.swap.max": "0",
        "cpu.max": "50000 100000",
    }
    assert set((tmp_path / "cgroup.subtree_control").read_text().split()) == {
        "+pids",
        "+memory",
        "+cpu",
    }
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert cgroup.oom_killed() is True


def test_where_no_cgroup_can_be_made_nothing_claims_to_enforce(tmp_path):
    cgroup = _Cgroup(Limits(pids=64), root=tmp_path / "absent")
    assert not cgroup.enforces("pids") and cgroup.members() == set()


def test_groups_left_by_a_killed_supervisor_are_swept(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("+pids")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"arena-sandbox-{dead.pid}-00000000"
    alive = tmp_path / f"arena-sandbox-{os.getpid()}-00000000"
    stale.mkdir()
    alive.mkdir()
    _Cgroup(Limits(pids=8), root=tmp_path)
    assert not stale.exists()
    assert alive.exists()


RUNS_IN_BWRAP = """
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, sys.argv[1])
from sandboxes.backends import BwrapSandbox, Limits

with tempfile.TemporaryDirectory() as folder:
    outcome = BwrapSandbox().run(
        [sys.executable, "-c", "import torch; print('imported')"],
        workdir=Path(folder),
        env={},
        limits=Limits(timeout_s=120),
    )
    print(outcome.returncode, (Path(folder) / "child.log").read_text()[-500:])
"""


@pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")
def test_bwrap_runs_a_python_environment_reached_through_a_link(tmp_path):
    link = tmp_path / "venv-link"
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    python = link / "bin" / Path(sys.executable).name
    done = subprocess.run(
        [str(python), "-c", RUNS_IN_BWRAP, str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.stdout.startswith("0 imported"), done.stdout + done.stderr
