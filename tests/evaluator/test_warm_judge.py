"""Warm judges (grader/warm_judge.py, grader/reference_cache.py): one long-lived judge serves one
evaluation after another with the verdicts a one-job judge gives, runs no reference on the cases
it holds, and is replaced wherever a job does not end cleanly."""

import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from grader import EvaluateOptions, evaluate
from grader import prepared as prepared_module
from grader import warm_judge as warm_module
from grader.child import TorchGlobals
from grader.reference_cache import Expected, ReferenceCache, case_key, worth_caching
from sandboxes.backends import Limits, ProcessSandbox, bwrap_usable

SOLUTIONS = Path(__file__).resolve().parent / "solutions"
HONEST = SOLUTIONS / "silu_triton.py"
WRONG = SOLUTIONS / "silu_wrong_relu.py"
OPTIONS = {"timeout_s": 180, "unseen_count": 1, "hidden_seed": "warm-judge-test"}

needs_bwrap = pytest.mark.skipif(not bwrap_usable(), reason="needs bubblewrap")


@pytest.fixture
def judges(monkeypatch):
    fresh = warm_module.WarmJudges()
    monkeypatch.setattr(warm_module, "WARM", fresh)
    pool = prepared_module.Pool()
    monkeypatch.setattr(prepared_module, "POOL", pool)
    yield fresh
    fresh.close()
    pool.close()


def verdict(result):
    return result.status, {name: gate.passed for name, gate in result.gates.items()}


def judge_pid(judges):
    (running,) = judges.held()
    return running.proc.pid


@needs_bwrap
def test_one_warm_judge_serves_evaluations_with_a_one_job_judges_verdicts(judges):
    # test_prepared.py and test_engine_cpu.py give a one-job judge's verdicts on these
    # solutions: passed, and failed on correctness.
    first = evaluate("silu", HONEST, "cpu", EvaluateOptions(warm_judge=True, **OPTIONS))
    pid = judge_pid(judges)
    second = evaluate("silu", WRONG, "cpu", EvaluateOptions(warm_judge=True, **OPTIONS))
    third = evaluate("silu", HONEST, "cpu", EvaluateOptions(warm_judge=True, **OPTIONS))
    assert judge_pid(judges) == pid  # the same process judged all three
    passed = (
        "passed",
        {"compile": True, "correctness": True, "performance": None, "generalization": True},
    )
    assert verdict(first) == verdict(third) == passed
    # A wrong solution is still wrong on the cases the judge took from its cache.
    assert second.status == "failed" and second.gates["correctness"].passed is False
    cases = first.environment["judge_cache"]["misses"]
    assert first.environment["judge_cache"]["hits"] == 0 and cases > 0
    # The later evaluations ran no reference on the visible cases the first one computed.
    assert third.environment["judge_cache"]["hits"] >= 6
    assert third.environment["judge_cache"]["entries"] >= cases
    # Same seed, same solution: the same unseen shapes, so every case is held.
    assert third.environment["judge_cache"]["misses"] == 0
    assert [r.correct for r in third.per_shape] == [r.correct for r in first.per_shape]


@needs_bwrap
def test_a_warm_judge_that_died_is_replaced_and_the_evaluation_is_judged(judges):
    evaluate("silu", HONEST, "cpu", EvaluateOptions(warm_judge=True, **OPTIONS))
    (running,) = judges.held()
    running.proc.kill()
    running.proc.wait()
    again = evaluate("silu", HONEST, "cpu", EvaluateOptions(warm_judge=True, **OPTIONS))
    assert again.status == "passed", again.gates
    assert judge_pid(judges) != running.proc.pid
    # A new judge holds nothing yet: every case is computed again.
    assert again.environment["judge_cache"]["hits"] == 0


# A long-lived child as child.warm_main is: one job per line, each ended by "served".
SERVING = textwrap.dedent(
    """
    import json, os, sys, time
    fd = int(os.environ["ARENA_CHANNEL_FD"])
    def send(event, **fields):
        os.write(fd, (json.dumps({"event": event, **fields}) + "\\n").encode())
    send("prepared")
    while line := sys.stdin.readline().strip():
        if line == "hang":
            time.sleep(60)
        if line == "die":
            os._exit(7)
        send("judged", job=line)
        send("served", code=0 if line != "fail" else 3)
    """
)


def serving_child(tmp_path):
    return ProcessSandbox().start(
        [sys.executable, "-c", SERVING],
        workdir=tmp_path,
        env={},
        limits=Limits(timeout_s=30),
        prepared=True,
    )


def test_a_served_job_ends_at_its_served_message_and_the_child_runs_on(tmp_path):
    running = serving_child(tmp_path)
    try:
        first = running.serve("a", 10, end_event="served")
        second = running.serve("b", 10, end_event="served")
        assert first.returncode == second.returncode == 0 and not first.timed_out
        # Each job's outcome holds its own messages only.
        assert [m["job"] for m in first.messages if m["event"] == "judged"] == ["a"]
        assert [m["job"] for m in second.messages if m["event"] == "judged"] == ["b"]
        assert running.alive()
        failed = running.serve("fail", 10, end_event="served")
        assert failed.returncode == 3
    finally:
        running.discard()


def test_a_served_job_that_hangs_is_timed_out_and_killed(tmp_path):
    running = serving_child(tmp_path)
    started = time.monotonic()
    outcome = running.serve("hang", 1.0, end_event="served")
    assert outcome.timed_out and time.monotonic() - started < 5
    assert not running.alive()


def test_a_child_that_exits_mid_job_reports_its_exit(tmp_path):
    running = serving_child(tmp_path)
    outcome = running.serve("die", 10, end_event="served")
    assert outcome.returncode == 7 and not outcome.timed_out
    assert not running.alive()


def test_the_warm_judges_holder_replaces_a_judge_whose_job_failed(tmp_path):
    judges = warm_module.WarmJudges()
    started = []

    def start():
        folder = tmp_path / f"judge-{len(started)}"
        folder.mkdir()
        started.append(serving_child(folder))
        return started[-1], folder

    try:
        assert judges.serve(("k",), start, "a", 10).returncode == 0
        assert judges.serve(("k",), start, "b", 10).returncode == 0
        assert len(started) == 1  # the same child served both
        assert judges.serve(("k",), start, "fail", 10).returncode == 3
        assert judges.held() == [] and not (tmp_path / "judge-0").exists()
        assert judges.serve(("k",), start, "c", 10).returncode == 0
        assert len(started) == 2
        # A judge for other settings is let go.
        judges.serve(("other",), start, "d", 10)
        assert len(started) == 3 and not started[1].alive()
    finally:
        judges.close()


def entry(nbytes: int) -> Expected:
    return Expected([torch.zeros(nbytes // 4)], [], nbytes // 4)


def test_the_cache_keeps_what_fits_its_budget_least_recently_used_out_first():
    cache = ReferenceCache(budget_bytes=1000)
    assert cache.put("a", entry(400)) and cache.put("b", entry(400))
    assert cache.get("a", "cpu") is not None  # a is now the most recently used
    assert cache.put("c", entry(400))  # b goes
    assert cache.get("b", "cpu") is None and cache.get("c", "cpu") is not None
    assert cache.held_bytes == 800 and len(cache) == 2
    assert not cache.put("huge", entry(4000)) and len(cache) == 2
    cache.resize(400)
    assert len(cache) == 1 and cache.held_bytes == 400
    assert (cache.hits, cache.misses) == (2, 1)


def test_a_case_on_the_device_is_held_only_where_computing_it_costs_more_than_its_copies():
    gb = 10**9
    # 1 GB out and back at 10 GB/s is 0.2 s: a 1 ms elementwise reference is computed again,
    # a 0.5 s convolution is held.
    assert not worth_caching(gb, 0.001, on_device=True)
    assert worth_caching(gb, 0.5, on_device=True)
    # Outputs already in host memory cost no copy; an unmeasured case is held.
    assert worth_caching(gb, 0.001, on_device=False)
    assert worth_caching(gb, None, on_device=True)


def test_a_case_key_changes_with_everything_that_determines_its_outputs():
    job = {"reference_sha256": "r1", "dtype": "float32", "device": "cpu", "stress_cases": {}}
    shape, case = {"n": 4}, {"seed": 0, "distribution": "problem"}
    base = case_key(job, shape, case)
    assert base == case_key(dict(job), dict(shape), dict(case))
    assert base != case_key({**job, "reference_sha256": "r2"}, shape, case)
    assert base != case_key(job, {"n": 5}, case)
    assert base != case_key(job, shape, {**case, "seed": 1})
    assert base != case_key({**job, "dtype": "float16"}, shape, case)
    stressed = {**case, "stress": "big"}
    scales = {"big": {"name": "big", "input_scales": {"0": 10.0}}}
    other = {"big": {"name": "big", "input_scales": {"0": 100.0}}}
    assert case_key({**job, "stress_cases": scales}, shape, stressed) != case_key(
        {**job, "stress_cases": other}, shape, stressed
    )


def test_torchs_process_wide_settings_are_put_back_after_a_job():
    saved = TorchGlobals.take()
    before = torch.get_default_dtype(), torch.get_float32_matmul_precision()
    try:
        torch.set_default_dtype(torch.float64)
        torch.set_float32_matmul_precision("medium")
        torch.backends.cuda.matmul.allow_tf32 = not saved.values["matmul_tf32"]
    finally:
        saved.restore()
    assert (torch.get_default_dtype(), torch.get_float32_matmul_precision()) == before
    assert torch.backends.cuda.matmul.allow_tf32 == saved.values["matmul_tf32"]
