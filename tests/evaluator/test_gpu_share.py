"""Several evaluations on one GPU (grader/gpu_share.py), with real processes: one candidate at a
time, and a timing that starts only once every other evaluation's trusted children are held at
a pause point."""

import itertools
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch

from grader import caseplan, feasibility, gpu_share
from grader.evaluate import _Evaluation
from grader.gpu_share import GpuShare, PausePoint, PauseRefused, share_folder
from grader.options import EvaluateOptions, EvaluationStopped
from grader.outcomes import device_busy
from grader.roles.common import StageError, runtime_error
from grader.taskspec import load_task
from sandboxes.backends import Outcome, bwrap_usable

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


# Another grading process in the GPU's room: it enters shared, after `delay` seconds, takes the
# room whole where asked, holds it for `hold` seconds, and prints when it held what, and its report.
ROOM = """
import json, sys, time
from pathlib import Path
from grader.gpu_share import GpuShare
share = GpuShare(Path(sys.argv[1]), 2)
mode, delay, hold = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
share.enter()
time.sleep(delay)
if mode == "whole":
    share.take_whole("test")
began = time.monotonic()
time.sleep(hold)
ended = time.monotonic()
share.leave()
print(json.dumps({"held": [began, ended], "report": share.report.to_dict()}))
"""


def room(folder: Path, mode: str, delay: float, hold: float) -> subprocess.Popen[str]:
    return run_python(ROOM, str(folder), mode, str(delay), str(hold))


def held(process: subprocess.Popen[str]) -> dict:
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    return json.loads(out)


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_the_room_is_shared_by_evaluations_within_their_share(folder):
    first, second = room(folder, "shared", 0.0, 0.8), room(folder, "shared", 0.0, 0.8)
    a, b = held(first), held(second)
    assert overlap(a["held"], b["held"])
    assert a["report"]["room"] == b["report"]["room"] == "shared"


def test_a_whole_room_waits_for_the_shared_and_holds_later_ones_back(folder):
    shared = room(folder, "shared", 0.0, 1.0)
    time.sleep(0.3)
    whole = room(folder, "whole", 0.0, 0.6)
    time.sleep(0.3)
    later = room(folder, "shared", 0.0, 0.2)
    a, w, c = held(shared), held(whole), held(later)
    # Alone while whole: after the shared holder left, and before the later one came in, though
    # the later one asked while the room was still shared.
    assert not overlap(w["held"], a["held"]) and not overlap(w["held"], c["held"])
    assert a["held"][1] <= w["held"][0] <= w["held"][1] <= c["held"][0]
    assert w["report"]["room"] == "whole" and w["report"]["whole_because"] == "test"
    assert w["report"]["room_waited_s"] >= 0.3
    assert c["report"]["room"] == "shared"


def test_two_evaluations_that_both_take_the_room_whole_take_it_in_turn(folder):
    # Both hold it shared when both ask for it whole: neither waits on the other's shared hold.
    first, second = room(folder, "whole", 0.4, 0.4), room(folder, "whole", 0.4, 0.4)
    a, b = held(first), held(second)
    assert not overlap(a["held"], b["held"])
    assert a["report"]["room"] == b["report"]["room"] == "whole"


def test_a_room_held_by_a_killed_process_is_let_go_and_a_stop_ends_the_wait(folder):
    holder = run_python(
        """
        import sys, time
        from pathlib import Path
        from grader.gpu_share import GpuShare
        share = GpuShare(Path(sys.argv[1]), 2)
        share.enter()
        share.take_whole("test")
        print("whole", flush=True)
        time.sleep(60)
        """,
        str(folder),
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "whole"
    share = GpuShare(folder, 2)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with pytest.raises(EvaluationStopped):
        share.enter(stop)
    assert 0.25 <= time.monotonic() - started < 5
    holder.kill()
    holder.wait()
    started = time.monotonic()
    share.enter()
    share.take_whole("after the kill")
    assert time.monotonic() - started < 2
    share.leave()


def test_a_plan_beyond_its_share_is_named_and_one_within_it_is_not():
    gib = 2**30
    entry = {"visible_peak_bytes": 2 * gib, "visible_output_bytes": gib}
    shapes = [{"shape": {"n": 1}, "seen": True, "cases": [{}]}]
    small = caseplan.Budget(gib, 12 * gib, 10 * gib, 0, 60 * gib)
    # 10 GiB of outputs beside the judge's 4 GiB reserve and three peaks fit 70 GiB.
    assert caseplan.beyond_share(entry, shapes, small, 70 * gib, on_device=True) == ""
    # 50 GiB do not: the room is taken whole.
    large = caseplan.Budget(gib, 60 * gib, 50 * gib, 0, 60 * gib)
    assert "outputs on the device" in caseplan.beyond_share(
        entry, shapes, large, 70 * gib, on_device=True
    )
    # Through host memory, only the judge's room counts.
    assert caseplan.beyond_share(entry, shapes, large, 70 * gib, on_device=False) == ""
    huge = {"visible_peak_bytes": 30 * gib, "visible_output_bytes": gib}
    why = caseplan.beyond_share(huge, shapes, small, 70 * gib, on_device=False)
    assert "estimated peak (30.0 GiB)" in why, why
    # The same plan alone on a GPU (the whole share) fits where it did not fit the share.
    assert caseplan.beyond_share(entry, shapes, large, 141 * gib, on_device=True) == ""
    # An unseen shape whose inputs are far larger than the visible shape's, its outputs not
    # (a matrix-vector product's K): its working set decides, by the probe's rule.
    unseen = {"shape": {"n": 2}, "seen": False, "cases": [{}]}
    wide = {
        **entry,
        "visible_footprint_bytes": 2 * gib,
        "shapes": {feasibility.shape_key({"n": 2}): {"footprint_bytes": 24 * gib}},
    }
    why = caseplan.beyond_share(wide, [*shapes, unseen], small, 70 * gib, on_device=True)
    assert "estimated peak (24.0 GiB)" in why, why
    assert caseplan.beyond_share(wide, [*shapes, unseen], small, 141 * gib, on_device=True) == ""
    # A plan beyond the share on several counts names each of them.
    why = caseplan.beyond_share(wide, [*shapes, unseen], large, 70 * gib, on_device=True)
    assert why.split("; ") == [
        "a shape's estimated peak (24.0 GiB) is over the share's budget (22.0 GiB)",
        "the judge's room (100.0 GiB) is more than the share",
        "the plan's outputs on the device (50.0 GiB) exceed the share",
    ], why


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
    decoy_test=True, probe_cache=sys.argv[1] + "/probes.json",
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
    # The task is new to both: the first to probe it took the GPU's room whole; the other
    # found it measured once the room was its, or probed it alone too.
    rooms = [r["share"] for r in results]
    assert "the task's probe" in [r["whole_because"] for r in rooms]
    assert all(r["room"] in ("shared", "whole") for r in rooms)
    turns.sort()
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(turns))
    assert not list((share_folder("cpu", tmp_path) / "active").iterdir())


def test_out_of_memory_within_a_share_is_not_the_solutions_and_is_graded_again_alone(
    folder, monkeypatch
):
    oom = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 14.27 GiB")
    # Within a share smaller than the one its shapes were planned on: not the solution's.
    assert runtime_error(oom, 4, "cuda", 0.5, 1.0).stage == "beyond_share"
    # Alone (the share is the whole), or where nothing was shared, it is.
    assert runtime_error(oom, 4, "cuda", 1.0, 1.0).stage == "runtime"
    assert runtime_error(oom, 4, "cuda", 1.0).stage == "runtime"
    ran_out = Outcome(1, False, 1.0, [{"event": "error", "stage": "beyond_share", "message": "x"}])
    # Had it ever reached the gates, it would read as a grader error, never the solution's.
    _, reason, _ = device_busy(ran_out)
    assert "not the solution's failure" in reason

    # The harness's own allocations for a case (the models, the inputs, their pristine copy)
    # running out within the share read the same, on a visible shape and an unseen one.
    from grader.roles import candidate as candidate_role

    sent = []
    monkeypatch.setattr(candidate_role.channel, "send", lambda event, **m: sent.append((event, m)))
    monkeypatch.setattr(candidate_role, "release_device_memory", lambda device: None)
    harness = object.__new__(candidate_role._Candidate)
    harness.device, harness.share, harness.whole = "cuda", 0.5, 1.0

    def out_of_memory(index, shape_job):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 14.27 GiB")

    monkeypatch.setattr(harness, "_run_shape", out_of_memory)
    with pytest.raises(StageError) as raised:
        harness._run_or_report(0, {"seen": True, "shape": {}})
    assert raised.value.stage == "beyond_share"
    harness._run_or_report(4, {"seen": False, "shape": {}})
    assert sent[-1][0] == "shape_error" and sent[-1][1]["stage"] == "beyond_share"
    # Anything else the harness meets is left to end the run as before.
    monkeypatch.setattr(harness, "_run_shape", lambda i, s: [][1])
    with pytest.raises(IndexError):
        harness._run_or_report(0, {"seen": True, "shape": {}})

    # The grading process's side: the candidate that ran out within its share runs again, on
    # the whole GPU, from nothing the first run left.
    evaluation = object.__new__(_Evaluation)
    evaluation.options = EvaluateOptions(evaluations_per_gpu=2)
    evaluation.share = GpuShare(folder, 2)
    evaluation.share.enter()
    evaluation.broker = None
    evaluation.device = "cpu"
    evaluation.candidate_dir = folder.parent / "candidate"
    evaluation.io_dir = evaluation.candidate_dir / "io"
    evaluation.io_dir.mkdir(parents=True)
    evaluation.solution = evaluation.candidate_dir / "solution.py"
    evaluation.solution_source = b"class ModelNew: ...\n"
    evaluation.solution.write_bytes(evaluation.solution_source)
    evaluation.reference = evaluation.candidate_dir / "reference.py"
    evaluation.spec = load_task("silu")
    runs = []

    def child(role, workdir, *, sandboxed):
        left = sorted(p.name for p in [*evaluation.io_dir.iterdir(), *workdir.glob("timing-*")])
        source = evaluation.solution.read_bytes()
        runs.append((role, evaluation.memory_share, evaluation.share.whole, left, source))
        # The first run leaves a case's outputs and its timing gate's files behind, and its
        # solution rewritten.
        (evaluation.io_dir / "shape4-case0.out").write_bytes(b"stale")
        (workdir / "timing-gate.waiting").touch()
        evaluation.solution.write_bytes(b"rewritten")
        return ran_out if len(runs) == 1 else Outcome(0, False, 1.0, [{"event": "done"}])

    monkeypatch.setattr(evaluation, "_child", child)
    outcome = evaluation._candidate()
    evaluation.share.leave()
    assert outcome.last("done") is not None
    source = evaluation.solution_source
    assert runs == [
        ("candidate", 0.5, False, [], source),
        ("candidate", 1.0, True, [], source),
    ]
    assert evaluation.reference.read_bytes() == evaluation.spec.reference_path.read_bytes()
    report = evaluation.share.report
    assert report.whole_because == "the candidate ran out of memory within the share"
    assert len(report.whole_turns) == 1
