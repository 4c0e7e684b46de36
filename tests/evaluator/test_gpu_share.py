"""Several evaluations on one GPU (grader/gpu_share.py), with real processes: one candidate at a
time, and a timing that starts only once every other evaluation's trusted children are held at
a pause point."""

import itertools
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grader import gpu_share
from grader.gpu_share import GpuShare, PausePoint, PauseRefused, share_folder
from sandboxes.backends import bwrap_usable

# A trusted child: registered, it works in steps of 10 ms, calling its pause point before each,
# and stamps each step (host monotonic clock) until its stop file appears.
CHILD = """
import sys, time
from pathlib import Path
from grader.gpu_share import PausePoint
folder, log, stop = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
pause = PausePoint(folder, lambda: None)
print("registered", flush=True)
with log.open("w") as out:
    while not stop.exists():
        pause()
        out.write(f"{time.monotonic()}\\n")
        out.flush()
        time.sleep(0.01)
pause.close()
"""

# Another grading process: holds the others paused (or its candidate lock) for a while, and
# prints when it held them and its report.
REQUESTER = """
import json, sys, time
from pathlib import Path
from grader.gpu_share import GpuShare
share = GpuShare(Path(sys.argv[1]), 2)
what, hold = sys.argv[2], float(sys.argv[3])
turn = share.paused_others("test") if what == "pause" else share.candidate_turn()
with turn:
    began = time.monotonic()
    time.sleep(hold)
    ended = time.monotonic()
print(json.dumps({"held": [began, ended], "report": share.report.to_dict()}))
"""


def run_python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args], stdout=subprocess.PIPE, text=True
    )


@pytest.fixture
def folder(tmp_path):
    return share_folder("cpu", tmp_path)


def start_child(folder: Path, tmp_path: Path, name: str):
    log, stop = tmp_path / f"{name}.log", tmp_path / f"{name}.stop"
    child = run_python(CHILD, str(folder), str(log), str(stop))
    assert child.stdout is not None and child.stdout.readline().strip() == "registered"
    return child, log, stop


def stamps(log: Path) -> list[float]:
    return [float(line) for line in log.read_text().split()]


def test_a_timing_starts_only_once_the_other_evaluations_children_are_held(folder, tmp_path):
    child, log, stop = start_child(folder, tmp_path, "judge")
    time.sleep(0.2)
    requester = run_python(REQUESTER, str(folder), "pause", "0.5")
    out, _ = requester.communicate(timeout=60)
    time.sleep(0.1)
    stop.touch()
    child.wait(timeout=30)
    report = json.loads(out)
    began, ended = report["held"]
    steps = stamps(log)
    # The child worked before and after, and not one of its steps fell inside the turn.
    assert any(t < began for t in steps) and any(t > ended for t in steps)
    assert not [t for t in steps if began <= t <= ended]
    (pause,) = report["report"]["pauses"]
    assert pause["held"] == 1 and pause["why"] == "test"
    # Its registration went with its job; no request is left behind.
    assert list((folder / "active").iterdir()) == []
    assert not (folder / "pause").exists()


def test_a_childs_own_grading_process_does_not_pause_it(folder, tmp_path):
    # This process started the child: its requests are its own evaluation's (a judge timing
    # the baselines its grading process asked the others to pause for).
    child, log, stop = start_child(folder, tmp_path, "judge")
    share = GpuShare(folder, 2)
    with share.paused_others("own"):
        began = time.monotonic()
        time.sleep(0.3)
        ended = time.monotonic()
    stop.touch()
    child.wait(timeout=30)
    assert share.report.pauses[0]["held"] == 0
    assert [t for t in stamps(log) if began <= t <= ended]


def test_one_candidate_at_a_time(folder):
    first = run_python(REQUESTER, str(folder), "candidate", "0.6")
    time.sleep(0.1)
    second = run_python(REQUESTER, str(folder), "candidate", "0.3")
    a, b = (json.loads(p.communicate(timeout=60)[0]) for p in (first, second))
    (a_from, a_to), (b_from, b_to) = a["held"], b["held"]
    assert a_to <= b_from or b_to <= a_from
    assert b["report"]["candidate_waited_s"] >= 0.3
    assert len(b["report"]["candidate_turns"]) == 1


def test_a_dead_childs_registration_and_a_dead_requesters_pause_hold_nobody(folder, tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    dead = int(gone.stdout)
    (folder / "active" / str(dead)).write_text(str(os.getpid() + 10**6))
    share = GpuShare(folder, 2)
    started = time.monotonic()
    with share.paused_others("nobody"):
        pass
    assert time.monotonic() - started < 5
    assert share.report.pauses[0]["held"] == 0
    # A request whose maker died holds no child: the child clears it and works on.
    (folder / "pause").write_text(json.dumps({"id": "stale-1", "by": dead}))
    child, log, stop = start_child(folder, tmp_path, "judge")
    time.sleep(0.3)
    stop.touch()
    child.wait(timeout=30)
    assert len(stamps(log)) > 5
    assert not (folder / "pause").exists()


def test_a_child_that_never_pauses_is_a_refusal_not_a_timing(folder, monkeypatch):
    # Registered, alive, never at a pause point (its parent is alive: this process's parent).
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (folder / "active" / str(sleeper.pid)).write_text(str(os.getppid()))
        monkeypatch.setattr(gpu_share, "PAUSE_LIMIT_S", 0.5)
        share = GpuShare(folder, 2)
        with pytest.raises(PauseRefused, match="did not pause"), share.paused_others("x"):
            raise AssertionError("timed without the pause")
        assert not (folder / "pause").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_gate_opens_once_the_others_are_held_and_they_run_on_after(folder, tmp_path):
    child, log, stop = start_child(folder, tmp_path, "judge")
    # The child's grading process is this test; the evaluation whose candidate is timed is
    # another's, whose keeper runs in a process of its own.
    keeper = run_python(
        """
        import json, sys, time
        from pathlib import Path
        from grader.gpu_share import GpuShare
        share = GpuShare(Path(sys.argv[1]), 2)
        gate = Path(sys.argv[2])
        thread = share.keep_gate(gate, lambda: not Path(sys.argv[3]).exists())
        thread.join()
        print(json.dumps(share.report.to_dict()))
        """,
        str(folder),
        str(tmp_path / "timing-gate"),
        str(tmp_path / "candidate-gone"),
    )
    gate = tmp_path / "timing-gate"
    time.sleep(0.2)
    assert not gate.exists()
    Path(f"{gate}{gpu_share.WAITING_SUFFIX}").touch()  # the candidate waits at its gate
    deadline = time.monotonic() + 30
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    opened = time.monotonic()
    time.sleep(0.3)  # "timing"
    timed_to = time.monotonic()
    Path(f"{gate}{gpu_share.DONE_SUFFIX}").touch()
    (tmp_path / "candidate-gone").touch()
    report = json.loads(keeper.communicate(timeout=60)[0])
    time.sleep(0.1)
    stop.touch()
    child.wait(timeout=30)
    assert gate.exists()
    assert not [t for t in stamps(log) if opened <= t <= timed_to]
    assert any(t > timed_to for t in stamps(log))
    (pause,) = report["pauses"]
    assert pause["why"] == "candidate timing" and pause["held"] == 1 and pause["held_s"] >= 0.3


def test_a_pause_point_without_a_shared_gpu_does_nothing():
    calls = []
    point = PausePoint(None, lambda: calls.append(1))
    point()
    point.close()
    assert calls == []


EVALUATE = """
import json, sys
from grader import EvaluateOptions, evaluate
options = EvaluateOptions(
    timeout_s=180, unseen_count=1, evaluations_per_gpu=2, gpu_share_root=sys.argv[1],
    decoy_test=True,
)
result = evaluate("silu", sys.argv[2], "cpu", options)
gates = {name: gate.passed for name, gate in result.gates.items()}
share = result.environment["gpu_share"]
print(json.dumps({"status": result.status, "gates": gates, "share": share}))
"""


@pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")
def test_two_evaluations_on_one_device_run_one_solution_at_a_time(tmp_path):
    solution = Path(__file__).parent / "solutions" / "silu_triton.py"
    runs = [run_python(EVALUATE, str(tmp_path), str(solution)) for _ in range(2)]
    results = [json.loads(run.communicate(timeout=600)[0].splitlines()[-1]) for run in runs]
    turns = []
    for result in results:
        assert result["status"] == "passed", result["gates"]
        share = result["share"]
        assert share["evaluations_per_gpu"] == 2
        # The candidate's child and the decoy test's: the solution's code, each under the lock.
        assert len(share["candidate_turns"]) == 2
        turns += share["candidate_turns"]
    turns.sort()
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(turns))
    assert not list((share_folder("cpu", tmp_path) / "active").iterdir())
