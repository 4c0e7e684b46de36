"""Entry point of a grader child process: `python -m grader.child JOB.json`, or `--prepared`
(started ahead of its job, prepared.py). The job's "role" picks what runs (grader/roles/: probe,
candidate, decoy, judge, build); progress goes over the private channel only, never stdout.
One shape's tensors are alive at a time in each child; caches are emptied between shapes.
"""

import contextlib
import json
import os
import sys
import traceback
from pathlib import Path

import torch
import torch.profiler
import triton  # noqa: F401 - imported ahead: a solution's first import of it costs seconds

from grader import channel
from grader.roles import ROLES
from grader.roles.common import StageError, hold_to_share
from grader.roles.judge import judge_stress_state as _judge_stress_state  # noqa: F401 - tests' name


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    hold_to_share(job)
    try:
        ROLES[job["role"]](job)
    except StageError as exc:
        channel.send("error", stage=exc.stage, message=exc.message, shape=exc.shape_index)
        return 3
    channel.send("done")
    return 0


def prepared_main() -> int:
    """A child started ahead of its job (prepared.py): every role's modules are imported (this
    module's imports), CUDA is left uninitialised, and the job's path comes as one line on
    stdin. End of input (the pool let it go) ends it with nothing done."""
    # The profiler's host side starts slowly the first time; the device side needs CUDA.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        torch.ones(1).add_(1)
    channel.send("prepared")
    line = sys.stdin.readline().strip()
    if not line:
        return 0
    return main(line)


def _end(code: int) -> None:
    """Ends the process as soon as its last message is out: every report has gone through the
    channel (unbuffered writes), so nothing is left to tear down that the operating system does
    not release by itself (the interpreter's and CUDA's orderly shutdown took 0.5-1 s)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _run(argv: list[str]) -> int:
    try:
        return prepared_main() if argv[1] == "--prepared" else main(argv[1])
    except SystemExit as exc:  # a solution's own sys.exit() keeps its exit code
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # reported by its exit code and the log, as an uncaught error is
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    _end(_run(sys.argv))
