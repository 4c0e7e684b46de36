"""The grader on CPU: Triton under the interpreter, candidates in sandboxed children."""

import os
import textwrap
import time
from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate, load_task
from grader.cli import main as cli_main

SILU = "silu"


@pytest.fixture(scope="module")
def silu():
    return load_task(SILU)


def grade(task, path: Path, **options):
    return evaluate(task, path, "cpu", EvaluateOptions(**options))


def test_correct_triton_solution_passes_every_visible_shape(silu, solutions_dir):
    result = grade(silu, solutions_dir / "silu_triton.py")
    assert result.status == "passed"
    assert result.gates["compile"].passed is True
    assert result.gates["correctness"].passed is True
    assert result.gates["performance"].passed is None
    assert result.gates["performance"].reason == "CPU timings are not ranked"
    seen = [row for row in result.per_shape if row.seen]
    unseen = [row for row in result.per_shape if not row.seen]
    assert [row.shape for row in seen] == [dict(s) for s in silu.cpu_shapes]
    assert all(row.correct for row in seen) and len(unseen) == 5
    assert all(row.correct for row in unseen)
    assert result.gates["generalization"].passed is True
    assert result.summary["generalization_pass_rate"] == 1.0
    assert result.gates["correctness"].detail["cases_per_shape"] == 6
    assert result.flags == []
    # Correct, but untimed: no reward that would read as a measured 1x, and never ranked.
    assert result.device == "cpu"
    assert result.reward is None
    assert result.ranked is False
    assert len(result.solution_hash) == 64 and result.task_version == silu.version_hash
    # Every second of the evaluation is in one phase, each child's in its own.
    for phase in ("probe", "candidate_startup", "candidate_correctness", "judge"):
        assert result.phases[phase] > 0, result.phases
    assert abs(sum(result.phases.values()) - result.wall_s) < 0.01


def test_wrong_kernel_fails_correctness_naming_shape_and_error(silu, solutions_dir):
    result = grade(silu, solutions_dir / "silu_wrong_relu.py")
    assert result.status == "failed"
    assert result.reward == -2.0
    gate = result.gates["correctness"]
    assert gate.passed is False
    assert gate.reason.startswith(
        "incorrect on shape {'N': 4096}: seed 0 (problem inputs): output 0:"
    )
    assert "rtol=0.0001" in gate.reason
    assert result.gates["performance"].passed is None
    assert result.ranked is False


def test_output_of_the_wrong_shape_fails_without_broadcasting(silu, solutions_dir):
    result = grade(silu, solutions_dir / "wrong_shape.py")
    assert result.gates["correctness"].passed is False
    assert result.gates["correctness"].reason == (
        "incorrect on shape {'N': 4096}: seed 0 (problem inputs): "
        "output 0 has shape (1, 4096), expected (4096,)"
    )


@pytest.mark.parametrize(
    ("solution", "reason_part"),
    [
        ("syntax_error.py", "SyntaxError"),
        ("exits_at_import.py", "SystemExit"),
        ("no_model_new.py", "does not define a ModelNew class"),
    ],
)
def test_solution_that_does_not_import_fails_the_compile_gate(
    silu, solutions_dir, solution, reason_part
):
    result = grade(silu, solutions_dir / solution)
    assert result.status == "failed"
    assert result.reward == -5.0
    assert result.gates["compile"].passed is False
    assert result.gates["compile"].reason == "did not compile"
    assert reason_part in result.gates["compile"].detail["error"]
    assert result.gates["correctness"].passed is None


def test_constructor_failure_gets_the_could_not_construct_reward(silu, solutions_dir):
    result = grade(silu, solutions_dir / "raises_in_init.py")
    assert (result.status, result.reward) == ("failed", -4.0)
    assert result.gates["compile"].passed is True
    assert result.gates["correctness"].reason == "ModelNew could not be constructed"
    assert "cannot build the kernel" in result.gates["correctness"].detail["error"]


def test_exception_in_forward_is_a_runtime_failure(silu, solutions_dir):
    result = grade(silu, solutions_dir / "raises_in_forward.py")
    assert (result.status, result.reward) == ("failed", -3.0)
    assert result.gates["correctness"].reason == "failed while running"
    assert "invalid configuration argument" in result.gates["correctness"].detail["error"]


def test_hard_exit_in_forward_is_a_runtime_failure_not_a_pass(silu, solutions_dir):
    result = grade(silu, solutions_dir / "hard_exit_in_forward.py")
    assert (result.status, result.reward) == ("failed", -3.0)
    assert (
        "exited with code 0 before reporting a result"
        in (result.gates["correctness"].detail["error"])
    )


def test_hanging_solution_times_out_and_the_next_evaluation_is_correct(silu, solutions_dir):
    started = time.monotonic()
    result = grade(silu, solutions_dir / "hangs_in_forward.py", timeout_s=20)
    assert time.monotonic() - started < 60
    assert (result.status, result.reward) == ("timeout", -7.0)
    assert result.gates["compile"].passed is True
    assert result.gates["correctness"].reason == "timed out after 20 s"
    assert grade(silu, solutions_dir / "silu_triton.py").status == "passed"


def test_printed_verdicts_are_ignored(silu, solutions_dir):
    result = grade(silu, solutions_dir / "prints_fake_verdict.py")
    assert result.status == "failed"
    assert result.gates["correctness"].passed is False
    assert '"reward": 99.0' in result.log


def test_candidate_does_not_see_secrets_in_its_environment(silu, solutions_dir, monkeypatch):
    monkeypatch.setenv("ARENA_HIDDEN_SEED", "1234")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@db/prod")
    result = grade(silu, solutions_dir / "sees_hidden_seed.py")
    assert result.gates["correctness"].passed is True


def test_detached_processes_are_killed_when_the_evaluation_ends(silu, tmp_path):
    pid_file = tmp_path / "pid"
    solution = tmp_path / "spawns_daemon.py"
    solution.write_text(
        textwrap.dedent(f"""
        import subprocess
        import torch.nn as nn

        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        open({str(pid_file)!r}, "w").write(str(child.pid))

        class ModelNew(nn.Module):
            def forward(self, x):
                return x
    """)
    )
    # The process backend: bwrap's private /tmp would hide the pid file from this test.
    result = grade(silu, solution, sandbox="process", allow_unisolated=True)
    pid = int(pid_file.read_text())
    assert result.status == "failed"
    assert "background_process" in {flag.code for flag in result.flags}
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_cli_json_prints_exactly_one_object(solutions_dir, capsys):
    code = cli_main(
        [
            "evaluate",
            "--task",
            SILU,
            "--solution",
            str(solutions_dir / "silu_triton.py"),
            "--device",
            "cpu",
            "--json",
        ]
    )
    out = capsys.readouterr().out
    import json

    assert code == 0
    assert out.count("\n") == 1
    data = json.loads(out)
    assert data["status"] == "passed" and data["device"] == "cpu"
    assert data["ranked"] is False and data["reward"] is None
    assert data["gates"]["performance"]["reason"] == "CPU timings are not ranked"
    assert set(data["gates"]) == {"compile", "correctness", "performance", "generalization"}


def test_cli_reports_an_unknown_task_as_an_error(solutions_dir, capsys):
    code = cli_main(
        [
            "evaluate",
            "--task",
            "no-such-task",
            "--solution",
            str(solutions_dir / "silu_triton.py"),
            "--json",
        ]
    )
    assert code == 2
    assert "no task with slug 'no-such-task'" in capsys.readouterr().out
