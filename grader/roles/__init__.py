"""The grader's child processes, one module per role (docs/grading-pipeline.md):

- probe (probe.py, not sandboxed, no solution): what the reference needs on the visible and drawn
  shapes;
- candidate (candidate.py, sandboxed): the solution on every planned case, its outputs handed
  over, then timed;
- decoy (grader/decoy.py, sandboxed): the solution once more with its own kernels silenced;
- judge (judge.py, never runs the solution): the reference, the comparison, the baselines;
- build (build.py, sandboxed, no GPU): the solution imported so that its extensions compile.

PRELUDES (prelude.py) are done by a child started ahead before its job: the analysis of a
KernelBench file (the probe's child), the compile baseline's warm-up (the judge's child).

A new role is one module with a `run(job)` and one line in ROLES.
"""

from collections.abc import Callable
from typing import Any

from grader import decoy
from grader.roles.build import run_build
from grader.roles.candidate import run_candidate
from grader.roles.judge import run_judge
from grader.roles.prelude import run_analyse, run_warmup
from grader.roles.probe import run_probe

ROLES: dict[str, Callable[[dict[str, Any]], None]] = {
    "probe": run_probe,
    "candidate": run_candidate,
    "decoy": decoy.run_child,
    "judge": run_judge,
    "build": run_build,
}

PRELUDES: dict[str, Callable[[dict[str, Any]], None]] = {
    "analyse": run_analyse,
    "warmup": run_warmup,
}
