"""The command line's preludes (grader/preludes.py): a KernelBench file analysed by the probe's
child while the command line imports torch, and the compile baseline's warm-up in the judge's
child, watched so that a warm-up that fails or runs long never holds the evaluation."""

import hashlib
import json
import time
from pathlib import Path

import pytest

from grader import EvaluateOptions, channel, preludes, taskspec
from grader import prepared as prepared_module
from grader.cli import main as cli_main
from grader.launch import Launcher
from grader.roles import prelude
from grader.taskspec import TaskError, load_kernelbench_file
from sandboxes.backends import bwrap_usable

SOLUTIONS = Path(__file__).resolve().parent / "solutions"
PROBLEM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch_size = 16
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""
SOLUTION = """import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.clamp_min(x, 0.0)
"""
# A view that no size of N allows: the meta device refuses the problem as written.
BROKEN = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x.view(3, -1, 7)


N = 10


def get_inputs():
    return [torch.randn(N, 5)]


def get_init_inputs():
    return []
"""
FAILS_TO_BUILD = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]


def get_init_inputs():
    raise RuntimeError("no weights here")
"""


@pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")
def test_the_command_line_takes_a_kernelbench_files_analysis_from_the_probes_child(
    pool, tmp_path, monkeypatch, capsys
):
    problem, solution = tmp_path / "19_ReLU.py", tmp_path / "sol.py"
    problem.write_text(PROBLEM)
    solution.write_text(SOLUTION)
    assert load_kernelbench_file(problem).generalization["dims"]

    def not_here(path):
        raise AssertionError(f"{path} was analysed in the grading process")

    monkeypatch.setattr(taskspec, "_analyse_here", not_here)
    argv = ["evaluate", "--task", str(problem), "--solution", str(solution), "--device", "cpu"]
    assert cli_main([*argv, "--json", "--timeout", "180"]) == 0
    result = json.loads(capsys.readouterr().out)
    # The probe's child went on to its own job after the analysis: unseen shapes drawn from
    # the child's rules, screened, graded.
    assert result["status"] == "passed", result["gates"]
    generalization = result["gates"]["generalization"]["detail"]
    assert generalization["unseen_shapes"] == EvaluateOptions().unseen_count
    assert "compile_warmup" not in result["environment"]  # the CPU times nothing
    assert pool.wait_filled(1) == []


def test_the_childs_analysis_refuses_a_problem_in_the_grading_processs_words(tmp_path, monkeypatch):
    broken = tmp_path / "b.py"
    broken.write_text(BROKEN)
    with pytest.raises(TaskError) as refused:
        load_kernelbench_file(broken)
    sent = []
    monkeypatch.setattr(channel, "send", lambda event, **fields: sent.append((event, fields)))
    prelude.run_analyse({"path": str(broken)})
    [(event, report)] = sent
    assert event == "analysis" and report["error"] == str(refused.value)
    with pytest.raises(TaskError) as taken:
        load_kernelbench_file(broken, lambda path: report)
    assert str(taken.value) == str(refused.value)


def test_an_analysis_of_other_bytes_is_not_taken(tmp_path):
    problem = tmp_path / "19_ReLU.py"
    problem.write_text(PROBLEM)
    expected = load_kernelbench_file(problem)
    stale = {"sha256": "0" * 64, "shape": {"dim": 1}, "rules": {}, "fixed_reason": "stale"}
    spec = load_kernelbench_file(problem, lambda path: stale)
    assert spec.visible_shapes == expected.visible_shapes
    assert spec.generalization == expected.generalization
    # The child's report for these very bytes is taken as it is, a refusal included.
    digest = hashlib.sha256(problem.read_bytes()).hexdigest()
    with pytest.raises(TaskError, match="refused by the child"):
        load_kernelbench_file(
            problem, lambda path: {"sha256": digest, "error": "refused by the child"}
        )


def start_judge(tmp_path):
    launcher = Launcher("cpu", "", EvaluateOptions())
    folder = tmp_path / "slot"
    (folder / "candidate").mkdir(parents=True)  # where the candidate's gate opens
    return prepared_module.start_slot(("test",), folder, launcher.start, roles=("judge",))


def warmup_job(reference):
    return {"role": "warmup", "device": "cpu", "reference_path": str(reference), "shape": {}}


def test_a_warm_up_that_fails_ends_its_child_and_opens_the_gate(tmp_path):
    reference = tmp_path / "reference.py"
    reference.write_text(FAILS_TO_BUILD)
    slot = start_judge(tmp_path)
    running = slot.children["judge"]
    warmup = preludes.start_warmup(slot.children, slot.folder, warmup_job(reference))
    assert warmup is not None
    assert not warmup.gate.exists()
    warmup.settle()
    assert warmup.gate.exists()
    assert warmup.report["warmed"] is False
    # The judge's job will start a child cold: nothing the failed warm-up left reaches it.
    assert "judge" not in slot.children
    assert not running.alive()
    assert "no weights here" in running.log_path.read_text()
    prepared_module.discard_slot(slot)


def test_a_warm_up_past_its_limit_is_ended_and_the_gate_opens(tmp_path, monkeypatch):
    monkeypatch.setattr(preludes, "WARMUP_LIMIT_S", 0.5)
    reference = tmp_path / "reference.py"
    reference.write_text(PROBLEM)
    slot = start_judge(tmp_path)
    running = slot.children["judge"]
    started = time.monotonic()
    warmup = preludes.start_warmup(slot.children, slot.folder, warmup_job(reference))
    assert warmup is not None
    # A candidate told now waits no longer than the warm-up may run, and some slack.
    assert 0 < warmup.gate_job()["timing_gate_s"] <= 5.5
    warmup.settle()
    assert time.monotonic() - started < 5
    assert warmup.gate.exists() and warmup.report["warmed"] is False
    assert "judge" not in slot.children and not running.alive()
    prepared_module.discard_slot(slot)
