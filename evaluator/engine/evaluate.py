"""`evaluate(task, solution, device, options) -> EvalResult`: the grader's one entry point.

A reference child draws inputs and expected outputs; a candidate child, in a sandbox, imports the
solution and writes its outputs; this process compares them and never imports the candidate.
"""

import hashlib
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from evaluator.engine.compare import compare_outputs, tolerance_for
from evaluator.engine.formulas import FormulaError, formula_evaluate
from evaluator.engine.result import (
    REWARD_INCORRECT,
    REWARD_NOT_COMPILED,
    REWARD_NOT_CONSTRUCTED,
    REWARD_RUNTIME_FAILURE,
    REWARD_TIMEOUT_OR_SANDBOX,
    EvalResult,
    Gate,
    ShapeRow,
    Timing,
)
from evaluator.engine.sandbox import Limits, Outcome, SandboxError, sandbox_for, scrubbed_env
from evaluator.engine.taskspec import TaskSpec, load_task
from evaluator.engine.timing import percentile

ENGINE_ROOT = Path(__file__).resolve().parents[2]
LOG_TAIL_BYTES = 64 * 1024


@dataclass
class EvaluateOptions:
    timeout_s: float = 300.0
    memory_bytes: int | None = 16 * 1024**3
    sandbox: str = "process"
    seeds: tuple[int, ...] = (0, 1, 2)


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cuda", "cpu"):
        raise ValueError(f"device must be cuda, cpu or auto, not {device!r}")
    return device


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def evaluate(
    task: TaskSpec | str | os.PathLike[str],
    solution: str | os.PathLike[str],
    device: str = "auto",
    options: EvaluateOptions | None = None,
) -> EvalResult:
    started = time.monotonic()
    options = options or EvaluateOptions()
    spec = task if isinstance(task, TaskSpec) else load_task(task)
    solution_path = Path(solution).resolve()
    device = resolve_device(device)
    result = EvalResult(
        task=spec.to_dict(),
        task_version=spec.version_hash,
        solution_hash=file_sha256(solution_path),
        device=device,
        environment=_host_environment(),
    )
    with tempfile.TemporaryDirectory(prefix="arena-eval-") as tmp:
        _Evaluation(spec, solution_path, device, options, Path(tmp), result).run()
    result.wall_s = round(time.monotonic() - started, 3)
    return result


class _Evaluation:
    def __init__(
        self,
        spec: TaskSpec,
        solution: Path,
        device: str,
        options: EvaluateOptions,
        workdir: Path,
        result: EvalResult,
    ) -> None:
        self.spec, self.device, self.options, self.result = spec, device, options, result
        self.shapes = list(spec.shapes_for(device))
        self.timed = device == "cuda"
        self.reference_dir = workdir / "reference"
        self.candidate_dir = workdir / "candidate"
        self.io_dir = self.candidate_dir / "io"
        for folder in (self.reference_dir / "private", self.io_dir):
            folder.mkdir(parents=True)
        # The candidate gets a copy of its file and of the (visible) reference in its own folder.
        self.solution = shutil.copy(solution, self.candidate_dir / "solution.py")
        self.reference = shutil.copy(spec.reference_path, self.candidate_dir / "reference.py")

    def run(self) -> None:
        self.result.per_shape = [ShapeRow(shape=dict(s), seen=True) for s in self.shapes]
        try:
            reference = self._child("reference", self.reference_dir)
        except SandboxError as exc:
            return self._sandbox_error(str(exc))
        if reference.last("done") is None:
            return self._reference_failed(reference)
        self._record_reference(reference)
        expected = self._take_expected()
        try:
            candidate = self._child("candidate", self.candidate_dir)
        except SandboxError as exc:
            return self._sandbox_error(str(exc))
        self.result.log = _log_tail(candidate.log_path)
        if candidate.leftover_processes:
            self.result.gates["correctness"].detail["leftover_processes"] = (
                candidate.leftover_processes
            )
        self._grade(candidate, expected)

    def _child(self, role: str, workdir: Path) -> Outcome:
        job = {
            "role": role,
            "device": self.device,
            "shapes": self.shapes,
            "seeds": list(self.options.seeds),
            "timed": self.timed,
            "reference_path": str(self.reference),
            "solution_path": str(self.solution),
            "io_dir": str(self.io_dir),
            "private_dir": str(self.reference_dir / "private"),
        }
        job_path = workdir / "job.json"
        job_path.write_text(json.dumps(job))
        extra = {
            "PYTHONPATH": str(ENGINE_ROOT),
            "TORCH_EXTENSIONS_DIR": str(workdir / "ext"),
            "TRITON_CACHE_DIR": str(workdir / "triton"),
        }
        if self.device == "cpu":
            extra["TRITON_INTERPRET"] = "1"
            extra["CUDA_VISIBLE_DEVICES"] = ""
        # A CUDA context reserves far more address space than it uses; RLIMIT_AS would kill it.
        memory = self.options.memory_bytes if self.device == "cpu" else None
        sandbox = sandbox_for(self.options.sandbox)
        return sandbox.run(
            [sys.executable, "-m", "evaluator.engine.child", str(job_path)],
            workdir=workdir,
            env=scrubbed_env(extra, home=workdir),
            limits=Limits(timeout_s=self.options.timeout_s, memory_bytes=memory),
            readable=[ENGINE_ROOT],
        )

    def _record_reference(self, outcome: Outcome) -> None:
        for message in outcome.messages:
            if message.get("event") == "reference_shape" and message.get("eager_ms"):
                row = self.result.per_shape[int(message["shape"])]
                row.eager_ms = percentile([float(t) for t in message["eager_ms"]], 0.5)

    def _take_expected(self) -> dict[tuple[int, int], list[Any]]:
        """Expected outputs move into this process and off the disk before the candidate runs."""
        private = self.reference_dir / "private"
        expected = {
            (index, seed): torch.load(private / f"expected_{index}_{seed}.pt")
            for index in range(len(self.shapes))
            for seed in self.options.seeds
        }
        shutil.rmtree(private)
        return expected

    def _grade(self, outcome: Outcome, expected: dict[tuple[int, int], list[Any]]) -> None:
        gates, result = self.result.gates, self.result
        error = outcome.last("error")
        compiled = outcome.last("compiled") is not None
        if outcome.timed_out:
            stage = "correctness" if compiled else "compile"
            if compiled:
                gates["compile"] = Gate(True, "imported and defines ModelNew")
            gates[stage] = Gate(False, f"timed out after {self.options.timeout_s:g} s")
            return self._finish("timeout", REWARD_TIMEOUT_OR_SANDBOX)
        if not compiled:
            message = error["message"] if error else _exit_description(outcome.returncode)
            gates["compile"] = Gate(False, "did not compile", {"error": message})
            return self._finish("failed", REWARD_NOT_COMPILED)
        gates["compile"] = Gate(True, "imported and defines ModelNew")
        if error and error.get("stage") == "construct":
            gates["correctness"] = Gate(
                False, "ModelNew could not be constructed", {"error": error["message"]}
            )
            return self._finish("failed", REWARD_NOT_CONSTRUCTED)
        if error or outcome.last("done") is None:
            message = error["message"] if error else _exit_description(outcome.returncode)
            gates["correctness"] = Gate(False, "failed while running", {"error": message})
            return self._finish("failed", REWARD_RUNTIME_FAILURE)
        weights = {
            m["shape"]: m["weights"] for m in outcome.messages if m["event"] == "constructed"
        }
        gates["correctness"].detail["weights"] = sorted(set(weights.values()))
        if not self._compare_all(expected):
            return self._finish("failed", REWARD_INCORRECT)
        self._record_timings(outcome)
        self._performance_gate()
        gates["generalization"] = Gate(None, "not run: no unseen shapes are drawn for this task")
        speedup = result.summary.get("speedup_vs_eager")
        self._finish("passed", (speedup - 1.0) if speedup else 0.0)

    def _compare_all(self, expected: dict[tuple[int, int], list[Any]]) -> bool:
        atol, rtol = tolerance_for(self.spec.dtype, self.spec.tolerance)
        first_failure = ""
        for (index, seed), want in expected.items():
            row = self.result.per_shape[index]
            got = self._load_output(index, seed, want)
            verdict = compare_outputs(want, got, atol=atol, rtol=rtol) if got is not None else None
            failure = (
                "no readable output"
                if verdict is None
                else ""
                if verdict.correct
                else verdict.reason
            )
            if failure and row.correct is not False:
                row.correct, row.reason = False, f"seed {seed}: {failure}"
            elif not failure and row.correct is None:
                row.correct = True
            if verdict is not None and verdict.max_abs_err is not None:
                row.max_abs_err = max(row.max_abs_err or 0.0, verdict.max_abs_err)
                row.max_rel_err = max(row.max_rel_err or 0.0, verdict.max_rel_err or 0.0)
            if row.correct is False and not first_failure:
                first_failure = f"shape {row.shape}: {row.reason}"
        gate = self.result.gates["correctness"]
        detail = dict(gate.detail, atol=atol, rtol=rtol, seeds=list(self.options.seeds))
        if first_failure:
            self.result.gates["correctness"] = Gate(False, f"incorrect on {first_failure}", detail)
            return False
        self.result.gates["correctness"] = Gate(True, "all visible shapes match", detail)
        return True

    def _load_output(self, index: int, seed: int, want: list[Any]) -> list[Any] | None:
        path = self.io_dir / f"output_{index}_{seed}.pt"
        expected_bytes = sum(t.numel() * t.element_size() for t in want)
        try:
            if path.stat().st_size > 4 * expected_bytes + 1024 * 1024:
                return None
            loaded = torch.load(path, map_location="cpu", weights_only=True)
        except Exception:
            return None
        return loaded if isinstance(loaded, list) else None

    def _record_timings(self, outcome: Outcome) -> None:
        for message in outcome.messages:
            if message.get("event") != "candidate_shape" or not message.get("candidate_ms"):
                continue
            row = self.result.per_shape[int(message["shape"])]
            times = [float(t) for t in message["candidate_ms"]]
            row.candidate_ms = Timing(
                percentile(times, 0.5), percentile(times, 0.1), percentile(times, 0.9)
            )
            self._throughput(row)

    def _throughput(self, row: ShapeRow) -> None:
        if row.candidate_ms is None or row.candidate_ms.median <= 0:
            return
        seconds = row.candidate_ms.median / 1e3
        try:
            row.tflops = formula_evaluate(self.spec.flops, row.shape) / seconds / 1e12
            row.gbps = formula_evaluate(self.spec.bytes_moved, row.shape) / seconds / 1e9
        except FormulaError:
            pass

    def _performance_gate(self) -> None:
        if self.device == "cpu":
            self.result.gates["performance"] = Gate(None, "CPU timings are not ranked")
            return
        ratios = [
            row.eager_ms / row.candidate_ms.median
            for row in self.result.per_shape
            if row.eager_ms and row.candidate_ms and row.candidate_ms.median > 0
        ]
        if not ratios:
            self.result.gates["performance"] = Gate(False, "no timings were recorded")
            return
        speedup = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        self.result.summary["speedup_vs_eager"] = speedup
        passed = speedup >= 1.0
        verdict = "faster" if passed else "slower"
        self.result.gates["performance"] = Gate(
            passed, f"{speedup:.2f}x eager (geometric mean): {verdict} than PyTorch eager"
        )

    def _finish(self, status: str, reward: float) -> None:
        self.result.status, self.result.reward = status, reward

    def _sandbox_error(self, message: str) -> None:
        self.result.gates["compile"] = Gate(None, f"sandbox error: {message}")
        self._finish("error", REWARD_TIMEOUT_OR_SANDBOX)

    def _reference_failed(self, outcome: Outcome) -> None:
        error = outcome.last("error")
        message = error["message"] if error else _exit_description(outcome.returncode)
        if outcome.timed_out:
            message = f"timed out after {self.options.timeout_s:g} s"
        self.result.gates["compile"] = Gate(
            None, "the reference failed; the solution was not run", {"error": message}
        )
        self.result.log = _log_tail(outcome.log_path)
        self._finish("error", REWARD_TIMEOUT_OR_SANDBOX)


def _exit_description(returncode: int | None) -> str:
    if returncode is None:
        return "the process did not exit"
    if returncode < 0:
        return f"the process was killed by signal {-returncode}"
    return f"the process exited with code {returncode} before reporting a result"


def _log_tail(path: Path | None) -> str:
    if path is None or not path.exists():
        return ""
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
        return fh.read().decode("utf-8", errors="replace")


def _host_environment() -> dict[str, Any]:
    import triton

    environment: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "host": platform.machine(),
    }
    if torch.cuda.is_available():
        environment["gpu"] = torch.cuda.get_device_name()
    return environment
