"""Children started ahead of their evaluation (grader/prepared.py): the same verdicts
as children started cold, a clock that starts at the hand-over, and nothing left behind."""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader import EvaluateOptions, evaluate
from grader import prepared as prepared_module
from grader.baselines import usable
from grader.cli import main as cli_main
from grader.evaluate import scratch_root
from sandboxes.backends import Limits, ProcessSandbox, bwrap_usable
from tests.processes import fresh_interpreter

pytestmark = pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")

SOLUTIONS = Path(__file__).resolve().parent / "solutions"
DOUBLES = """import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x * 2
"""
WAITS_THEN_SLEEPS = "import sys, time\nsys.stdin.readline()\ntime.sleep(30)\n"


def verdict(result):
    return result.status, {name: gate.passed for name, gate in result.gates.items()}


def test_prepared_children_give_the_verdicts_of_cold_ones(pool):
    options = {
        "timeout_s": 180,
        "unseen_count": 2,
        "hidden_seed": "prepared-test",
        "prepared_ahead": 1,
    }
    honest = SOLUTIONS / "silu_triton.py"
    cold = evaluate("silu", honest, "cpu", EvaluateOptions(**options))
    first = evaluate("silu", honest, "cpu", EvaluateOptions(prepared=True, **options))
    pool.wait_filled(120)
    second = evaluate("silu", honest, "cpu", EvaluateOptions(prepared=True, **options))
    assert (
        verdict(cold)
        == verdict(first)
        == verdict(second)
        == (
            "passed",
            {"compile": True, "correctness": True, "performance": None, "generalization": True},
        )
    )
    assert second.environment["sandbox"] == cold.environment["sandbox"] == "bwrap"
    # The second found its children waiting with torch imported: its start-up is the hand-over.
    assert second.phases["candidate_startup"] < cold.phases["candidate_startup"]
    assert second.phases["candidate_startup"] < 1.0


def test_a_prepared_failing_solution_fails_as_it_does_cold(pool, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(DOUBLES)
    options = {
        "timeout_s": 180,
        "unseen_count": 1,
        "hidden_seed": "prepared-test",
        "prepared_ahead": 1,
    }
    cold = evaluate("silu", broken, "cpu", EvaluateOptions(**options))
    warm = evaluate("silu", broken, "cpu", EvaluateOptions(prepared=True, **options))
    assert verdict(cold) == verdict(warm)
    assert warm.status == "failed" and warm.gates["correctness"].passed is False


def test_the_evaluation_leaves_the_next_slots_ready_and_its_own_folder_removed(pool):
    options = EvaluateOptions(prepared=True, prepared_ahead=2, timeout_s=180, unseen_count=1)
    result = evaluate("silu", SOLUTIONS / "silu_triton.py", "cpu", options)
    assert result.status == "passed", result.gates
    ready = pool.wait_filled(120)
    assert len(ready) == 2
    for slot in ready:
        assert set(slot.children) == {"candidate", "judge", "probe"}
        assert all(child.proc.poll() is None for child in slot.children.values())
    assert len({slot.folder for slot in ready}) == 2
    # The evaluation's own folder is removed behind it: only the ready slots' remain.
    root = Path(scratch_root() or tempfile.gettempdir())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        mine = set(root.glob(f"arena-eval-{os.getpid()}-*"))
        if mine == {slot.folder for slot in ready}:
            break
        time.sleep(0.1)
    assert mine == {slot.folder for slot in ready}
    pool.close()
    for slot in ready:
        assert all(child.proc.poll() is not None for child in slot.children.values())
        assert not slot.folder.exists()


def test_a_one_off_evaluation_starts_its_children_together_and_none_ahead(pool):
    # As `python -m grader evaluate` grades: prepared_ahead=0, every child an interpreter of
    # its own.
    options = EvaluateOptions(
        prepared=True, prepared_ahead=0, timeout_s=180, unseen_count=1, fork_server=False
    )
    result = evaluate("silu", SOLUTIONS / "silu_triton.py", "cpu", options)
    assert result.status == "passed", result.gates
    assert result.environment["sandbox"] == "bwrap"
    # Each child's start, in seconds from the evaluation's: every part in order, ready before
    # its job ended. None imported the compiler ahead: the CPU's judge compiles nothing.
    starts = result.environment["child_start"]
    assert {"candidate", "judge"} <= set(starts)
    parts = ("launched", "interpreter", "torch", "triton", "grader", "profiler", "ready")
    for role, start in starts.items():
        times = [start[part] for part in parts]
        assert times == sorted(times), (role, start)
    assert not [role for role, start in starts.items() if "compiler" in start]
    # A CPU evaluation's children make no CUDA context ahead (child._device_ahead).
    assert not [role for role, start in starts.items() if "device" in start]
    # Nothing was started for a next evaluation, and the evaluation's folder is gone.
    assert pool.wait_filled(5) == []
    prepared_module.wait_removed()
    root = Path(scratch_root() or tempfile.gettempdir())
    assert not list(root.glob(f"arena-eval-{os.getpid()}-*"))


COMMAND_LINE_START = """
import json, sys
from grader import prepared
started = []
start_slot = prepared.start_slot
def counted(*args, **kwargs):
    started.append("torch" in sys.modules)
    return start_slot(*args, **kwargs)
prepared.start_slot = counted
from grader.cli import main
code = main(["evaluate", "--task", "silu", "--solution", sys.argv[1], "--device", sys.argv[2],
             "--json", "--timeout", "180"])
print("STARTED", json.dumps(started))
"""


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_the_command_line_starts_its_children_before_it_imports_torch(device):
    # The children's imports and the command line's own (torch, the task's analysis) overlap:
    # one slot is started, before torch is imported, and the evaluation grades with it.
    done = subprocess.run(
        [sys.executable, "-c", COMMAND_LINE_START, str(SOLUTIONS / "silu_triton.py"), device],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
        check=False,
    )
    lines = done.stdout.splitlines()
    assert lines and lines[-1].startswith("STARTED "), done.stdout + done.stderr
    result = json.loads(lines[0])
    assert result["status"] == "passed", result["gates"]
    assert result["environment"]["sandbox"] == "bwrap"
    # On this host "auto" is the CPU: the guess held, and no second slot was started.
    assert json.loads(lines[-1].removeprefix("STARTED ")) == [False]


def test_the_command_line_lets_go_of_children_its_evaluation_never_took(pool, tmp_path):
    # main() in a process that runs on (a test, a notebook): an evaluation that stops before it
    # begins leaves no waiting children and no folder behind.
    solution = str(SOLUTIONS / "silu_triton.py")
    missing = str(tmp_path / "missing.py")
    argv = ["evaluate", "--task", missing, "--solution", solution, "--device", "cpu", "--json"]
    code = cli_main(argv)
    assert code == 2
    assert pool.wait_filled(1) == []
    root = Path(scratch_root() or tempfile.gettempdir())
    assert not list(root.glob(f"arena-eval-{os.getpid()}-*"))


def test_a_profiled_call_leaves_the_compiler_stack_unimported():
    # torch.profiler.profile's start asks hasattr(torch, "_inductor"), which imports
    # torch._inductor and torch._dynamo: seconds of a candidate's first profiled call. The
    # profiler it wraps, which the candidate uses, sees the same operators without them.
    code = (
        "import sys, json, torch\n"
        "from grader.guards import profile_call\n"
        "out, profile = profile_call(lambda: torch.ones(4) + 1, 'cpu')\n"
        "compiler = [m for m in ('torch._dynamo', 'torch._inductor') if m in sys.modules]\n"
        "print(json.dumps([compiler, sorted(profile.aten_ops), out.tolist()]))\n"
    )
    compiler, aten_ops, out = json.loads(fresh_interpreter(code)[-1])
    assert compiler == []
    assert "aten::add" in aten_ops
    assert out == [2.0, 2.0, 2.0, 2.0]


def test_the_grading_process_records_tritons_version_without_importing_it():
    code = (
        "import sys, json\n"
        "from grader.evaluate import evaluate\n"
        "from grader.host import host_environment\n"
        "env = host_environment('cpu')\n"
        "print(json.dumps(['triton' in sys.modules, env['triton']]))\n"
        "import triton\n"
        "print(json.dumps(triton.__version__))\n"
    )
    first, second = fresh_interpreter(code)
    imported, recorded = json.loads(first)
    assert imported is False
    assert recorded == json.loads(second) != ""


def test_a_prepared_child_that_died_waiting_is_replaced_by_a_cold_one(pool):
    options = EvaluateOptions(prepared=True, prepared_ahead=1, timeout_s=180, unseen_count=1)
    evaluate("silu", SOLUTIONS / "silu_triton.py", "cpu", options)
    (ready,) = pool.wait_filled(120)
    ready.children["candidate"].proc.kill()
    ready.children["candidate"].proc.wait()
    result = evaluate("silu", SOLUTIONS / "silu_triton.py", "cpu", options)
    assert result.status == "passed", result.gates


def test_slots_prepared_for_other_settings_are_let_go(pool):
    options = EvaluateOptions(prepared=True, prepared_ahead=1, timeout_s=180, unseen_count=1)
    evaluate("silu", SOLUTIONS / "silu_triton.py", "cpu", options)
    (old,) = pool.wait_filled(120)
    other = EvaluateOptions(
        prepared=True, prepared_ahead=1, timeout_s=180, unseen_count=1, memory_bytes=6 * 2**30
    )
    evaluate("silu", SOLUTIONS / "silu_triton.py", "cpu", other)
    assert all(child.proc.poll() is not None for child in old.children.values())
    assert not old.folder.exists()
    (new,) = pool.wait_filled(120)
    assert new.key != old.key


def test_a_prepared_childs_timeout_counts_from_its_hand_over(tmp_path):
    running = ProcessSandbox().start(
        [sys.executable, "-c", WAITS_THEN_SLEEPS],
        workdir=tmp_path,
        env={},
        limits=Limits(timeout_s=1.0),
        prepared=True,
    )
    time.sleep(1.5)  # waiting for its job is not the job's time
    assert running.proc.poll() is None
    running.hand("job.json")
    outcome = running.wait(1.0)
    assert outcome.timed_out
    assert 1.0 <= outcome.wall_s < 1.5


def test_a_waiting_child_is_not_another_childs_stray(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    waiting = ProcessSandbox().start(
        [sys.executable, "-c", WAITS_THEN_SLEEPS],
        workdir=tmp_path / "a",
        env={},
        limits=Limits(timeout_s=30),
        prepared=True,
    )
    try:
        done = ProcessSandbox().run(
            [sys.executable, "-c", "pass"], workdir=tmp_path / "b", env={}, limits=Limits()
        )
        assert done.returncode == 0 and done.leftover_processes == 0
        assert waiting.proc.poll() is None
    finally:
        waiting.discard()
    assert waiting.proc.poll() is not None


def test_a_process_started_while_a_child_waited_is_not_its_stray(tmp_path):
    # The grading process (or a test beside it) starts a process of its own after a prepared
    # child started and before it is handed its job: the job's end leaves that process alone.
    waiting = ProcessSandbox().start(
        [sys.executable, "-c", "import sys\nsys.stdin.readline()\n"],
        workdir=tmp_path,
        env={},
        limits=Limits(timeout_s=30),
        prepared=True,
    )
    neighbour = subprocess.Popen([sys.executable, "-c", "import time\ntime.sleep(60)"])
    try:
        waiting.hand("job.json")
        outcome = waiting.wait(30)
        assert outcome.returncode == 0 and outcome.leftover_processes == 0
        assert neighbour.poll() is None, "the neighbour was killed as the child's stray"
    finally:
        neighbour.kill()
        neighbour.wait()


def test_cached_baselines_stand_only_for_the_same_timing_method():
    entry = {"eager_ms": 1.0, "compile_ms": 0.5, "graphs": True}
    assert usable(entry, graphs=True, want_compile=True)
    assert not usable(entry, graphs=False, want_compile=True)
    assert not usable({**entry, "compile_ms": None}, graphs=True, want_compile=True)
    assert usable({**entry, "compile_ms": None}, graphs=True, want_compile=False)
    assert not usable(None, graphs=True, want_compile=False)


def test_the_slot_started_for_an_evaluation_is_the_one_it_takes(tmp_path):
    # A process that graded before (a notebook, a test session) may hold a slot of the same
    # settings ready; the command line's own, started with its preludes, is taken first.
    pool = prepared_module.Pool()
    folders = (tmp_path / f"slot-{n}" for n in range(10))

    def starter(role: str, workdir: Path):
        return ProcessSandbox().start(
            [sys.executable, "-c", WAITS_THEN_SLEEPS], workdir=workdir, env={}, limits=Limits()
        )

    def folder() -> Path:
        return next(folders)

    earlier = pool.start_now(("key",), folder, starter, roles=("candidate",))
    own = pool.start_now(("key",), folder, starter, roles=("candidate",))
    try:
        taken = pool.take(("key",), folder, starter, ahead=0, roles=("candidate",))
        assert taken is own
    finally:
        pool.close()
        for slot in (earlier, own):
            prepared_module.discard_slot(slot)
