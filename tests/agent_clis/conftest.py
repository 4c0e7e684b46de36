"""Real agent CLIs (Claude Code, Codex, Gemini CLI, pinned in agent-clis/ and installed by
`make agent-clis`) run by a real agents worker against the scripted model server.

One model server and one worker serve the whole module: the server plays the script named
like the agent's model, and the worker has queues of the module's own.
"""

import os
import shutil
import socket
import uuid
from pathlib import Path

import pytest
from django.test import override_settings

from model_server import ScriptedModelServer, script_load
from sandboxes.backends import bwrap_problem
from tests.arena.runs.conftest import Queues, start_worker
from tests.conftest import REPO

CLI_BIN = REPO / "var" / "agent-clis" / "node_modules" / ".bin"
SCRIPTS = ("solve-vector-add", "reach-out", "endless", "broken-kernel")
# Any key will do for the scripted server; the adapters pass these through, nothing else.
KEYS = {
    "ANTHROPIC_API_KEY": "sk-arena-test",
    "OPENAI_API_KEY": "sk-arena-test",
    "GEMINI_API_KEY": "arena-test",
}


def host_address() -> str:
    """An address of this host other than loopback: inside the sandbox, loopback is the
    sandbox's own, so the model server must be named by an address the proxy reaches."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def cli_missing(binary: str) -> str | None:
    if not (CLI_BIN / binary).exists():
        return f"{binary} is not installed (make agent-clis)"
    return bwrap_problem()


@pytest.fixture(scope="module")
def model_server():
    first, *others = (script_load(name) for name in SCRIPTS)
    with ScriptedModelServer(first, others=others, host=host_address()) as server:
        yield server


@pytest.fixture(scope="module")
def cli_queues():
    tag = uuid.uuid4().hex[:8]
    queues = Queues(agents=f"agents-{tag}", build=f"build-{tag}", gpu=f"gpu-{tag}")
    with override_settings(
        ARENA_AGENTS_QUEUE=queues.agents,
        ARENA_BUILD_QUEUE=queues.build,
        ARENA_GPU_QUEUE=queues.gpu,
    ):
        yield queues


@pytest.fixture(scope="module")
def cli_worker(django_db_setup, django_db_blocker, cli_queues, tmp_path_factory):
    """One worker on the module's agents, build and gpu queues, with the CLIs on its PATH."""
    if shutil.which("npm") is None and not CLI_BIN.exists():
        pytest.skip("npm is missing: no agent CLIs (make agent-clis)")
    log_path = Path(tmp_path_factory.mktemp("cli-worker")) / "worker.log"
    worker = start_worker(
        queues=[cli_queues.agents, cli_queues.build, cli_queues.gpu],
        log_path=log_path,
        **cli_queues.env(),
        **KEYS,
        PATH=f"{CLI_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    )
    yield worker
    worker.stop()
