"""The command line's preludes (grader/preludes.py): a KernelBench file analysed by the probe's
child while the command line imports torch, and the compile baseline's warm-up in the judge's
child, watched so that a warm-up that fails or runs long never holds the evaluation."""

import hashlib
import json
import time
from pathlib import Path

import pytest

from grader import EvaluateOptions, analyses, channel, hostinfo, launch, preludes, taskspec
from grader import prepared as prepared_module
from grader.baselines import baseline_key, cache_store, compile_cached
from grader.cli import main as cli_main
from grader.launch import Launcher
from grader.roles import judge as judge_role
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
    monkeypatch.setenv("ARENA_PROBE_CACHE", str(tmp_path / "probes.json"))
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
    # The child's analysis is kept for the next evaluation of these bytes (analyses.py).
    kept = analyses.cached(tmp_path / "probes.json", result["task_version"])
    assert kept is not None and kept["shape"] == {"batch_size": 16, "dim": 4096}


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


WEIGHTED = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return self.linear(x)


features = 8


def get_inputs():
    return [torch.randn(4, features)]


def get_init_inputs():
    return [features]
"""


@pytest.fixture
def warmed(monkeypatch):
    """The warm-up's compiled models (roles/judge.py WARMED), with torch.compile stood in for:
    what is kept and under which key is the warm-up's, not inductor's."""
    monkeypatch.setattr(judge_role, "WARMED", {})
    monkeypatch.setattr(prelude, "WARMED", judge_role.WARMED)
    monkeypatch.setattr(prelude, "compiled_baseline", lambda model, first_set: ("compiled", model))
    monkeypatch.setattr(channel, "send", lambda event, **fields: None)
    return judge_role.WARMED


def warm_up(tmp_path, shape):
    reference = tmp_path / "reference.py"
    reference.write_text(WEIGHTED)
    prelude.run_warmup({**warmup_job(reference), "shape": shape})
    copy = tmp_path / "judge" / "reference.py"  # the judge's copy of the same bytes
    copy.parent.mkdir(exist_ok=True)
    copy.write_text(WEIGHTED)
    return copy


def test_the_warm_up_leaves_its_compiled_model_for_the_judge_of_the_same_bytes_and_shape(
    tmp_path, warmed
):
    copy = warm_up(tmp_path, {"features": 16})
    [(label, model)] = [compiled for module, compiled in warmed.values()]
    assert label == "compiled" and model.linear.in_features == 16
    # Another device, or other constants, and the judge compiles its own.
    assert judge_role.take_warmed(copy, {"features": 16}, "cuda") is None
    assert judge_role.take_warmed(copy, {"features": 8}, "cpu") is None
    # Taken once: the judge asked for it above with other constants, so it is gone.
    assert judge_role.take_warmed(copy, {"features": 16}, "cpu") is None
    warm_up(tmp_path, {"features": 16})
    label, model = judge_role.take_warmed(copy, {"features": 16}, "cpu")
    assert label == "compiled" and model.linear.in_features == 16
    assert warmed == {}


def test_a_warm_up_on_the_files_own_constants_serves_the_shape_its_analysis_names(tmp_path, warmed):
    # A KernelBench file's warm-up is handed before its analysis: its shape is the file's own.
    copy = warm_up(tmp_path, {})
    assert judge_role.take_warmed(copy, {"features": 8}, "cpu")[0] == "compiled"
    warm_up(tmp_path, {})
    changed = tmp_path / "other.py"
    changed.write_text(WEIGHTED.replace("features = 8", "features = 9"))
    assert judge_role.take_warmed(changed, {"features": 9}, "cpu") is None


def test_a_warm_up_of_a_model_with_large_weights_keeps_nothing(tmp_path, warmed, monkeypatch):
    reference = tmp_path / "reference.py"
    reference.write_text(WEIGHTED)
    # 16 x 16 weights and 16 biases in float32: 1,088 bytes, over a 1,000-byte bound.
    monkeypatch.setattr(prelude, "WARMED_MAX_BYTES", 1000)
    prelude.run_warmup({**warmup_job(reference), "shape": {"features": 16}})
    assert warmed == {}


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


def test_the_compile_cache_answers_for_every_visible_shape_or_not_at_all(tmp_path):
    cache = tmp_path / "baselines.json"
    ids = {
        "task_version": "v1",
        "gpu": "NVIDIA H200",
        "torch_version": "2.11",
        "triton_version": "3.6",
    }
    small, large = {"n": 1024}, {"n": 4096}
    cache_store(cache, {baseline_key(**ids, shape=small): {"eager_ms": 1.0, "compile_ms": 0.5}})
    assert compile_cached(cache, **ids, shapes=[small])
    assert not compile_cached(cache, **ids, shapes=[small, large])  # one shape is not cached
    assert not compile_cached(cache, **ids, shapes=[])
    assert not compile_cached(cache, **{**ids, "gpu": "NVIDIA H100 80GB HBM3"}, shapes=[small])
    assert not compile_cached(
        cache, **{**ids, "gpu": ""}, shapes=[small]
    )  # nvidia-smi said nothing
    cache_store(cache, {baseline_key(**ids, shape=large): {"eager_ms": 2.0, "compile_ms": None}})
    assert not compile_cached(
        cache, **ids, shapes=[small, large]
    )  # eager alone: the judge compiles
    cache.write_text("{not json")
    assert not compile_cached(cache, **ids, shapes=[small])


def hand_kernelbench_preludes(tmp_path, monkeypatch, entry, *, analysed_before):
    """The command line's preludes for a KernelBench file on a GPU host (nvidia-smi's answer
    stood in for), with `entry` cached for the file's shape, and the file's analysis cached
    where it was `analysed_before`."""
    problem = tmp_path / "19_ReLU.py"
    problem.write_text(PROBLEM)
    monkeypatch.setattr(hostinfo, "nvidia_smi_query", lambda fields, gpu="0": "NVIDIA H200")
    options = EvaluateOptions(
        baseline_cache=str(tmp_path / "baselines.json"), probe_cache=str(tmp_path / "probes.json")
    )
    digest = hashlib.sha256(problem.read_bytes()).hexdigest()
    shape = dict(load_kernelbench_file(problem).visible_shapes[0])
    if analysed_before:
        report = {"sha256": digest, "shape": shape, "rules": {}, "fixed_reason": ""}
        analyses.store(Path(options.probe_cache), report)
    torch_version, triton_version = hostinfo.cache_libraries()
    key = baseline_key(
        task_version=digest,
        gpu="NVIDIA H200",
        torch_version=torch_version,
        triton_version=triton_version,
        shape=shape,
    )
    cache_store(Path(options.baseline_cache), {key: entry})
    launcher = Launcher("cpu", "", options)
    folder = tmp_path / "slot"
    (folder / "candidate").mkdir(parents=True)
    slot = prepared_module.start_slot(("test",), folder, launcher.start, roles=("probe", "judge"))
    judge = slot.children["judge"]
    launch._hand_preludes(slot, "cuda", options, str(problem))
    assert slot.warmup is not None
    slot.warmup.settle()
    assert slot.warmup.gate.exists()  # the candidate is never held past the watch
    return slot, judge


COMPILED = {"eager_ms": 0.2, "compile_ms": 0.1, "graphs": True}


def test_no_warm_up_and_no_analysis_where_the_caches_hold_both(tmp_path, monkeypatch):
    slot, judge = hand_kernelbench_preludes(tmp_path, monkeypatch, COMPILED, analysed_before=True)
    try:
        # The file's shape read from the cache: no analysis handed to the probe's child, no
        # warm-up handed to the judge's, whose child is kept for the judge's job.
        assert slot.analysis is None
        assert not (slot.folder / "probe" / "analyse.json").exists()
        assert slot.warmup.report["needless"] is True
        assert slot.warmup.report["warmed"] is False
        assert slot.children.get("judge") is judge and judge.alive()
        assert not (slot.folder / "judge" / "warmup.json").exists()
    finally:
        prepared_module.discard_slot(slot)


def assert_warm_up_handed(slot, judge):
    assert slot.warmup.report["needless"] is False
    assert (slot.folder / "judge" / "warmup.json").exists()
    # This host has no GPU, so the handed warm-up fails: its child is ended, as any failed
    # warm-up's is, and the judge's job would start one cold.
    assert slot.warmup.report["warmed"] is False
    assert "judge" not in slot.children and not judge.alive()


def test_a_warm_up_is_handed_where_the_cache_lacks_the_compiled_time(tmp_path, monkeypatch):
    slot, judge = hand_kernelbench_preludes(
        tmp_path, monkeypatch, {**COMPILED, "compile_ms": None}, analysed_before=True
    )
    try:
        assert_warm_up_handed(slot, judge)
    finally:
        prepared_module.discard_slot(slot)


def test_a_file_never_analysed_is_analysed_and_warmed_up_at_once(tmp_path, monkeypatch):
    # Its shape, and so its name in the baseline cache, is not known before the analysis: the
    # warm-up is not held for it.
    slot, judge = hand_kernelbench_preludes(tmp_path, monkeypatch, COMPILED, analysed_before=False)
    try:
        assert slot.analysis is not None
        assert_warm_up_handed(slot, judge)
        report = slot.analysis[1].wait("analysis")
        assert report is not None and report["shape"] == {"batch_size": 16, "dim": 4096}
    finally:
        prepared_module.discard_slot(slot)


def test_an_analysis_is_kept_for_the_same_bytes_alone(tmp_path):
    cache = tmp_path / "probes.json"
    problem = tmp_path / "19_ReLU.py"
    problem.write_text(PROBLEM)
    digest = hashlib.sha256(problem.read_bytes()).hexdigest()
    report = {"sha256": digest, "shape": {"dim": 4096}, "rules": {"dims": []}, "fixed_reason": ""}
    asked = []

    def child(path):
        asked.append(path)
        return report

    analysed = analyses.analysed_from(cache, child)
    assert analysed(problem) == report
    assert analysed(problem) == report  # the second from the cache
    assert asked == [problem]
    # Other bytes are another file: asked again, and a report for other bytes is not kept.
    problem.write_text(PROBLEM.replace("4096", "2048"))
    assert analyses.analysed_from(cache, lambda path: report)(problem) == report
    assert analyses.cached(cache, hashlib.sha256(problem.read_bytes()).hexdigest()) is None
    # A refusal is kept as one; a cache that cannot be read is a miss.
    refused = {"sha256": "1" * 64, "error": "no size constant", "shape": {"x": 1}}
    analyses.store(cache, refused)
    assert analyses.cached(cache, "1" * 64) == {"sha256": "1" * 64, "error": "no size constant"}
    cache.write_text("[]")
    assert analyses.cached(cache, digest) is None
