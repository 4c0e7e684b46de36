"""Grading a folder of solutions against a suite: matching, JSON lines, resuming after a kill."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluator.batch import results_done, suite_pairs
from tasks.models import Task
from tests.conftest import REPO, worker_env
from tests.waiting import wait_for

SOLUTIONS = Path(__file__).resolve().parent / "solutions"
BROKEN = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x)\n"


def test_solutions_are_matched_by_slug_folder_and_upstream_kernelbench_names(tmp_path):
    slugs = ["silu", "kernelbench-level1-19-relu", "kernelbench-level2-7-conv3d-relu"]
    tasks = [Task(slug=slug) for slug in slugs]
    files = {
        "silu.py": "a",
        "silu/second.py": "b",
        "level1/19_ReLU.py": "c",
        "level2/7_Conv3d_ReLU/try_3.py": "d",
        "level_1_problem_19_sample_0_kernel.py": "e",
        "level1/20_LeakyReLU.py": "f",
        "notes/helper.py": "g",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    pairs, unmatched = suite_pairs(tasks, tmp_path)
    assert sorted((p.task.slug, p.name) for p in pairs) == [
        ("kernelbench-level1-19-relu", "level1/19_ReLU.py"),
        ("kernelbench-level1-19-relu", "level_1_problem_19_sample_0_kernel.py"),
        ("kernelbench-level2-7-conv3d-relu", "level2/7_Conv3d_ReLU/try_3.py"),
        ("silu", "silu.py"),
        ("silu", "silu/second.py"),
    ]
    assert unmatched == ["level1/20_LeakyReLU.py", "notes/helper.py"]


def test_a_line_cut_short_is_dropped_and_grader_errors_are_graded_again(tmp_path):
    out = tmp_path / "results.jsonl"
    lines = [
        {"task": "silu", "solution": "a.py", "solution_sha256": "1", "status": "passed"},
        {"task": "silu", "solution": "b.py", "solution_sha256": "2", "status": "error"},
        {"task": "silu", "solution": "c.py", "solution_sha256": "3", "status": "error"},
        {"task": "silu", "solution": "c.py", "solution_sha256": "3", "status": "failed"},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    out.write_text(text + '{"task": "silu", "solution": "d.py", "solu')
    assert results_done(out) == {("silu", "a.py", "1"), ("silu", "c.py", "3")}
    assert out.read_text() == text


@pytest.fixture
def solutions(tmp_path):
    folder = tmp_path / "solutions"
    (folder / "silu").mkdir(parents=True)
    (folder / "silu.py").write_text((SOLUTIONS / "silu_triton.py").read_text())
    (folder / "silu" / "broken.py").write_text(BROKEN)
    (folder / "unknown-task.py").write_text(BROKEN)
    return folder


@pytest.mark.django_db
def test_grade_suite_writes_a_line_per_solution_and_a_second_run_grades_nothing(
    solutions, tmp_path, capsys
):
    call_command("sync_tasks")
    out = tmp_path / "results.jsonl"
    grade = ["grade_suite", "--suite", "core", "--tasks", "silu", "--device", "cpu"]
    call_command(*grade, "--solutions", str(solutions), "--out", str(out))
    captured = capsys.readouterr()
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    verdicts = {(line["solution"], line["status"], line["ranked"]) for line in lines}
    # Graded on the CPU: the correct solution passes, untimed, so it is not ranked.
    assert verdicts == {("silu.py", "passed", False), ("silu/broken.py", "failed", False)}
    passed = next(line for line in lines if line["solution"] == "silu.py")
    assert passed["reward"] is None and passed["result"]["device"] == "cpu"
    broken = next(line for line in lines if line["solution"] == "silu/broken.py")
    assert broken["reason"] == "did not compile"
    assert broken["result"]["gates"]["compile"]["passed"] is False
    assert "1/2 silu" in captured.err and "2/2 silu" in captured.err
    assert "matched no task of suite 'core': unknown-task.py" in captured.err
    assert "2 solutions: 2 graded (1 failed, 1 passed; 0 ranked)" in captured.out

    call_command(*grade, "--solutions", str(solutions), "--out", str(out))
    assert "0 graded (none; 0 ranked), 2 already in the results file" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) == 2


@pytest.mark.django_db
def test_an_unknown_suite_is_refused_with_the_suites_there_are(solutions):
    call_command("sync_tasks")
    with pytest.raises(CommandError, match=r"no active task of suite 'nope'.*core"):
        call_command("grade_suite", "--suite", "nope", "--solutions", str(solutions))


@pytest.mark.django_db(transaction=True)
def test_a_killed_run_resumes_where_it_stopped_without_grading_anything_twice(solutions, tmp_path):
    call_command("sync_tasks")
    (solutions / "silu" / "third.py").write_text((SOLUTIONS / "silu_triton.py").read_text())
    out = tmp_path / "results.jsonl"
    command = [sys.executable, "manage.py", "grade_suite", "--suite", "core", "--tasks", "silu"]
    command += ["--device", "cpu", "--solutions", str(solutions), "--out", str(out)]
    env = worker_env()
    killed = subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True)
    try:
        wait_for(
            lambda: out.is_file() and out.read_text().count("\n") >= 1,
            timeout_s=240,
            what="the first result line",
        )
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    first = out.read_text().splitlines()
    assert 1 <= len(first) < 3
    subprocess.run(command, cwd=REPO, env=env, check=True, capture_output=True, timeout=400)
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    assert sorted(line["solution"] for line in lines) == [
        "silu.py",
        "silu/broken.py",
        "silu/third.py",
    ]
    assert lines[: len(first)] == [json.loads(text) for text in first]
