"""The build stage (builds.py on CPU workers): one solution's extensions compiled in the sandbox
into the build cache, and the verdict on a solution whose build failed, graded without a GPU.
"""

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import torch

from grader import builds
from grader.host import new_result
from grader.launch import CHILD_CODE, ENGINE_ROOT, exit_description
from grader.options import EvaluateOptions, isolating_sandbox, resolve_device
from grader.result import (
    REWARD_NOT_COMPILED,
    EvalResult,
    Gate,
)
from grader.scratch import private_scratch
from grader.taskspec import TaskSpec, load_task
from sandboxes.backends import (
    Limits,
    Outcome,
    scrubbed_env,
)


def build_failure_result(
    task: TaskSpec | str | os.PathLike[str],
    solution: str | os.PathLike[str],
    device: str,
    report: builds.BuildReport,
) -> EvalResult:
    """The verdict on a solution whose build failed in the build stage: no GPU was used. The
    environment names the GPU kind it was meant for (`device`) and this build host."""
    spec = task if isinstance(task, TaskSpec) else load_task(task)
    device = resolve_device(device)
    result = new_result(spec, Path(solution).resolve(), "cpu")
    result.device = device
    result.environment["build"] = {
        "key": report.key,
        "source": "build stage",
        "status": report.status,
    }
    result.phases["build"] = report.build_s
    conclude_build_failure(result, report)
    result.wall_s = report.build_s
    return result


def target_arch(device: str, environment: dict[str, Any], options: EvaluateOptions) -> str:
    """TORCH_CUDA_ARCH_LIST for this evaluation's builds: none on the CPU; the option where
    given; else the GPU's own compute capability."""
    if device == "cpu":
        return ""
    if options.cuda_arch is not None:
        return options.cuda_arch
    return builds.arch_for_capability(str(environment.get("compute_capability", "")))


def conclude_build_failure(result: EvalResult, report: builds.BuildReport) -> None:
    """A compile failure decided by the build stage: the solution's, graded without a GPU."""
    result.gates["compile"] = Gate(
        False,
        f"did not compile: {report.reason}",
        {"error": report.error[-8000:], "build_key": report.key},
    )
    result.status, result.reward = "failed", REWARD_NOT_COMPILED


def build_solution(
    task: TaskSpec | str | os.PathLike[str],
    solution: str | os.PathLike[str],
    *,
    arch: str,
    options: EvaluateOptions,
) -> builds.BuildReport:
    """The build stage for one solution (builds.py): a cached outcome, or the solution imported
    in the sandbox on this host's CPU with TORCH_CUDA_ARCH_LIST=arch, its outcome stored."""
    if not options.build_cache:
        raise ValueError("the build stage needs a build cache (EvaluateOptions.build_cache)")
    root = Path(options.build_cache)
    spec = task if isinstance(task, TaskSpec) else load_task(task, catalogs=options.catalogs)
    source = Path(solution).read_bytes()
    key = builds.build_key(
        source=source, torch_version=torch.__version__, cuda=torch.version.cuda, arch=arch
    )
    cached = builds.cache_lookup(root, key)
    if cached is not None:
        return cached
    checked = builds.static_check(key, source)
    if checked is not None:
        builds.cache_store(root, checked, {})
        return checked
    started = time.monotonic()
    with private_scratch("arena-build") as workdir:
        path = workdir / "solution.py"
        path.write_bytes(source)
        shutil.copy(spec.reference_path, workdir / "reference.py")
        (workdir / "job.json").write_text(
            json.dumps({"role": "build", "device": "cpu", "solution_path": str(path)})
        )
        extra = {
            "PYTHONPATH": str(ENGINE_ROOT),
            "TORCH_EXTENSIONS_DIR": str(workdir / "ext"),
            "CUDA_VISIBLE_DEVICES": "",
            "TORCH_CUDA_ARCH_LIST": arch,
        }
        outcome = isolating_sandbox(options).run(
            [sys.executable, "-m", "grader.child", str(workdir / "job.json")],
            workdir=workdir,
            env=scrubbed_env(extra, home=workdir),
            limits=Limits(timeout_s=options.timeout_s, memory_bytes=options.memory_bytes),
            readable=CHILD_CODE,
        )
        report = _build_report(key, outcome, options.timeout_s)
        report.build_s = round(time.monotonic() - started, 3)
        libraries = builds.collected_libraries(report.extensions, workdir)
        if report.status == builds.BUILT and libraries is None:
            report = builds.BuildReport(key, builds.DEFERRED, "a built library was not found")
        builds.cache_store(root, report, libraries or {})
    return report


def _build_report(key: str, outcome: Outcome, timeout_s: float) -> builds.BuildReport:
    message = outcome.last("build")
    if outcome.timed_out:
        return builds.BuildReport(key, builds.DEFERRED, f"the build ran past {timeout_s:g} s")
    if message is None:
        said = exit_description(outcome)
        return builds.BuildReport(key, builds.DEFERRED, f"the build child ended early: {said}")
    return builds.BuildReport(
        key,
        str(message["status"]),
        str(message.get("reason", "")),
        str(message.get("error", "")),
        dict(message.get("extensions") or {}),
    )
