"""role "build" (sandboxed, on a host without a GPU): only imports the solution so that its
extensions compile (builds.py)."""

from pathlib import Path
from typing import Any

from grader import channel
from grader.builds import (
    BUILT,
    DEFERRED,
    FAILED,
    BuildDeferred,
    ExtensionBuildError,
    ExtensionLoaders,
)
from grader.modules import load_module
from grader.roles.common import describe


def run_build(job: dict[str, Any]) -> None:
    """Import the solution on a host without a GPU so that its extensions compile (builds.py);
    one "build" message says built, failed or deferred."""

    path = Path(job["solution_path"])
    try:
        compile(path.read_bytes(), str(path), "exec")
    except (SyntaxError, ValueError) as exc:
        channel.send("build", status=FAILED, reason="not valid Python", error=describe(exc))
        return
    loaders = ExtensionLoaders(None, build_only=True)
    loaders.install()
    try:
        load_module(path, "solution")
    except ExtensionBuildError as exc:
        channel.send("build", status=FAILED, reason="the compiler refused it", error=str(exc))
    except BuildDeferred as exc:
        channel.send("build", status=DEFERRED, reason=str(exc))
    except BaseException as exc:  # anything else may need what only the GPU host has
        reason = "importing it needs more than this build host has (left to the GPU stage)"
        channel.send("build", status=DEFERRED, reason=reason, error=describe(exc))
    else:
        channel.send("build", status=BUILT, extensions=loaders.built)
