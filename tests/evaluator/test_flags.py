"""The decisions behind side_stream_work, library_work and excused aliases, on made-up reports.

The measurements themselves run in tests/evaluator/gpu (CUDA) and in the adversarial suite
(the interpreter on CPU); here each rule meets the numbers an H100 gave.
"""

import pytest

from grader.decoy import Finding
from grader.guards import KernelRun, WorkShare, _device_work_share
from grader.guards import _interpreter_work_share as interpreter_work_share
from grader.result import EvalResult, ShapeRow
from grader.taskspec import load_task
from grader.timing import SideStreamReport, confirmed, side_stream_suspected
from grader.verdicts import collect_flags, library_share, shape_failures
from sandboxes.backends import Outcome

# Profiler stream ids as CUPTI numbers them on an H100: 7 is the legacy default stream.
LEGACY, SIDE = 7, 13
# A device synchronize inside the bracket, measured on an H100 with an empty call.
SYNC_MS = 0.026


def suspected(streams, current, stream_ms, drained_ms, sync_ms=SYNC_MS):
    return side_stream_suspected(
        kernel_streams=streams,
        current_stream=current,
        stream_median_ms=stream_ms,
        drained_median_ms=drained_ms,
        sync_ms=sync_ms,
    )


def test_side_stream_work_is_reported_only_where_every_drained_measurement_shows_it():
    # The measurements of the raw launch on the legacy stream on an H200: one met noise (0.045
    # ms drained against a 0.021 ms sync), the next did not; and a solution whose work runs
    # on a side stream, suspected in each.
    def report(drained_ms, sync_ms=0.0150):
        return SideStreamReport([drained_ms] * 10, sync_ms, [LEGACY, 17], 17)

    def check(reports):
        taken = []

        def measure():
            taken.append(reports[len(taken)])
            return taken[-1]

        def suspicious(r):
            return suspected(r.kernel_streams, 17, 0.0061, r.drained_ms[0], r.sync_ms)

        return confirmed(measure, suspicious), len(taken)

    assert check([report(0.0453, 0.0211), report(0.0196)]) == (None, 2)
    assert check([report(0.0196)]) == (None, 1)
    hider = [report(0.912), report(0.897)]
    found, taken = check(hider)
    assert taken == 2 and found is hider[1]


def test_a_few_microsecond_kernel_on_the_default_stream_is_not_side_stream_work():
    # Measured: a 4096-element add, 4.0 us on the stream and 29.9 us drained, as a raw
    # <<<>>> launch and as a torch op. The sync alone is 26 us: nothing was hidden.
    assert not suspected([LEGACY], LEGACY, 0.0040, 0.0299)
    assert not suspected([LEGACY, LEGACY], LEGACY, 0.0040, 0.0287)


def test_work_left_running_on_another_stream_is_side_stream_work():
    # cuBLAS on a stream of its own: the current stream sees a launch, the device a matmul.
    assert suspected([SIDE], LEGACY, 0.006, 2.4)
    # Even a short kernel, once another stream is seen, counts above ten microseconds.
    assert suspected([LEGACY, SIDE], LEGACY, 0.004, 0.055)


def test_another_stream_that_the_current_one_waits_for_is_not_flagged():
    # A side stream joined back before returning: drained time is the stream time plus the sync.
    assert not suspected([LEGACY, SIDE], LEGACY, 0.0487, 0.0487 + SYNC_MS + 0.004)


def test_on_the_current_stream_only_a_gap_no_sync_jitter_explains_counts():
    # No other stream in the profile (a solution may hide its streams from the profiler):
    # a quarter of a millisecond hidden still counts, tens of microseconds do not.
    assert not suspected([LEGACY], LEGACY, 0.004, 0.004 + SYNC_MS + 0.1)
    assert suspected([LEGACY], LEGACY, 0.004, 3.0)


def test_unknown_streams_leave_the_decision_to_the_timing():
    assert suspected([LEGACY], None, 0.004, 0.06)
    assert not suspected([], None, 0.004, 0.032)


def test_device_time_in_library_kernels_is_the_library_share():
    share = _device_work_share(
        [
            KernelRun("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32", LEGACY, 900.0),
            KernelRun("my_bias_kernel", LEGACY, 10.0),
            KernelRun("Memset (Device)", LEGACY, 2.0),
        ]
    )
    assert share.own_us == 10.0
    assert share.library_us == 902.0
    assert share.library_share > 0.98
    assert share.top_library[0][0].startswith("sm90_xmma_gemm")


def test_an_allocation_fill_beside_an_honest_kernel_is_a_minority():
    fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
    share = _device_work_share(
        [KernelRun(fill, LEGACY, 3.1), KernelRun("elementwise_add_kernel", LEGACY, 9.5)]
    )
    assert share.library_share < 0.5


def test_under_the_interpreter_time_outside_launches_is_library_time():
    share = interpreter_work_share(12_000.0, [("zero_scratch", 1_500.0)], {"aten::matmul": 10e3})
    assert (share.own_us, share.library_us) == (1_500.0, 10_500.0)
    assert share.top_library == [("aten::matmul", 10e3)]
    assert WorkShare(0.0, 0.0, []).library_share == 0.0


SILU = load_task("silu")


UNTESTABLE = Finding("inconclusive", "kernels of its own still ran silenced: cupy_kernel")


def flag_codes(messages, shapes=({"N": 4096},), found=UNTESTABLE, spec=SILU):
    result = EvalResult(per_shape=[ShapeRow(shape=dict(s), seen=True) for s in shapes])
    candidate = Outcome(0, False, 1.0, messages=[{"event": "case", **m} for m in messages])
    judge = Outcome(0, False, 1.0)
    return {f.code: f.message for f in collect_flags(spec, result, candidate, judge, found)}


def profiled(shape, own_us, library_us, own=("silu_kernel",), top=(("aten::mm", 1.0),)):
    return {
        "shape": shape,
        "case": 0,
        "seen": True,
        "violations": [],
        "aten_ops": [],
        "own_kernels": list(own),
        "own_us": own_us,
        "library_us": library_us,
        "top_library": [list(t) for t in top],
    }


def test_library_work_names_the_shape_and_the_kernels_that_carry_the_time():
    top = (("sm90_xmma_gemm", 800.0), ("aten::empty", 1.0))
    flags = flag_codes(
        [profiled(0, 100.0, 50.0), profiled(1, 100.0, 801.0, top=top)], [{"N": 1}, {"N": 2}]
    )
    assert "library_work" in flags
    assert flags["library_work"].startswith("on shape {'N': 2}, 89% of forward()'s time")
    assert "sm90_xmma_gemm" in flags["library_work"]
    assert "aten::empty" not in flags["library_work"]


def test_library_work_spares_fixed_costs_and_solutions_without_kernels():
    assert "library_work" not in flag_codes([profiled(0, 2.0, 15.0)])
    assert "library_work" not in flag_codes([profiled(0, 600.0, 400.0)])
    # No kernel of its own at all is no_own_kernel's finding, not library_work's.
    assert set(flag_codes([profiled(0, 0.0, 900.0, own=())])) == {"no_own_kernel"}


def test_unseen_shapes_do_not_count_towards_library_work():
    message = dict(profiled(0, 10.0, 900.0), seen=False)
    assert "library_work" not in flag_codes([message])


def test_library_time_beside_kernels_the_output_needs_is_a_figure_not_a_flag():
    messages = [profiled(0, 10.0, 900.0)]
    assert flag_codes(messages, found=Finding("needed", "output 0: NaN where finite")) == {}
    assert flag_codes(messages, found=Finding("not_run")) == {}
    candidate = Outcome(0, False, 1.0, messages=[{"event": "case", **messages[0]}])
    assert library_share(candidate) == pytest.approx(900.0 / 910.0)


def test_the_library_share_rule_stands_in_only_where_the_decoy_test_cannot_tell():
    flags = flag_codes([profiled(0, 10.0, 900.0)])
    assert flags["library_work"].endswith(f"(the decoy test could not tell: {UNTESTABLE.message})")


def test_a_decoy_finding_is_its_own_flag():
    found = Finding("decoy", "its own kernels did nothing the output needs")
    assert flag_codes([profiled(0, 10.0, 900.0)], found=found) == {"decoy_kernel": found.message}


def test_the_forbidden_library_op_beside_own_kernels_stays_no_own_kernel(tmp_path):
    folder = tmp_path / "mm"
    folder.mkdir()
    (folder / "reference.py").write_text("M = 8\n")
    (folder / "task.toml").write_text(
        'slug = "mm"\ntitle = "mm"\ncategory = "hard"\nbackends = ["triton"]\n'
        'dtype = "float32"\nregime = "compute"\nflops = "2 * M"\nbytes = "4 * M"\n'
        'visible_shapes = [{ M = 8 }]\nforbidden_ops = ["aten::mm", "aten::matmul"]\n'
    )
    spec = load_task(folder)
    message = dict(profiled(0, 10.0, 900.0), aten_ops=["aten::empty", "aten::mm"])
    flags = flag_codes([message], found=Finding("needed"), spec=spec)
    assert set(flags) == {"forbidden_op", "no_own_kernel"}
    assert flags["no_own_kernel"].startswith("forward() called aten::mm, the library op the task")


def failures(violations, reference_aliases):
    shapes = [{"shape": {"M": 1}, "seen": True, "cases": [{"seed": 0, "distribution": "problem"}]}]
    candidate = Outcome(
        0, False, 1.0, messages=[{"event": "case", "shape": 0, "case": 0, "violations": violations}]
    )
    judged = {"event": "judged", "shape": 0, "case": 0, "correct": True, "reason": ""}
    judge = Outcome(0, False, 1.0, messages=[dict(judged, reference_aliases=reference_aliases)])
    return shape_failures(shapes, candidate, judge)[0]


def test_an_alias_that_the_reference_has_too_is_excused():
    assert failures(["output 0 aliases input 0"], ["output 0 aliases input 0"]) is None


def test_an_alias_the_reference_does_not_have_fails():
    reason = failures(["output 0 aliases input 0"], [])
    assert reason == "seed 0 (problem inputs): output 0 aliases input 0"
    # The reference aliasing another input excuses nothing else.
    assert failures(["output 0 aliases input 1"], ["output 0 aliases input 0"]) is not None


def test_an_excused_alias_does_not_excuse_an_input_modified_in_place():
    reason = failures(
        ["output 0 aliases input 0", "input 0 was modified in place"], ["output 0 aliases input 0"]
    )
    assert reason == "seed 0 (problem inputs): input 0 was modified in place"


def test_the_reference_as_its_own_solution_is_not_overfit_where_its_output_is_a_view():
    from pathlib import Path

    from grader import EvaluateOptions, evaluate

    here = Path(__file__).resolve().parent
    result = evaluate(
        here / "tasks" / "transpose_view",
        here / "solutions" / "transpose_reference.py",
        "cpu",
        EvaluateOptions(timeout_s=120, hidden_seed="views"),
    )
    assert result.status == "passed", result.gates
    assert all(row.correct for row in result.per_shape), result.per_shape
    # Visible shape M = 1 and, with this seed, unseen shapes with a side of 1 return views.
    assert sum(1 in row.shape.values() for row in result.per_shape if not row.seen) >= 1
    assert result.gates["generalization"].passed is True
    assert [flag.code for flag in result.flags] == ["no_own_kernel"]


def timing_flags(*, candidate_graphs, judge_graphs, judge_eager_ms, scale=10.0):
    """score_performance over one visible shape: the candidate's process timed eager at 0.127 ms
    beside a 0.1 ms solution (times scale), the judge timed eager at judge_eager_ms (times
    scale). The default scale puts the judge's eager above the launch-bound floor."""
    return timing_result(
        candidate_graphs=candidate_graphs,
        judge_graphs=judge_graphs,
        judge_eager_ms=judge_eager_ms,
        scale=scale,
    )[0]


def timing_result(*, candidate_graphs, judge_graphs, judge_eager_ms, scale):
    from grader.scoring import score_performance

    shapes = [{"shape": {"N": 4096}, "seen": True, "cases": []}]
    result = EvalResult(per_shape=[ShapeRow(shape={"N": 4096}, seen=True, correct=True)])
    end = {
        "event": "timing_end",
        "shape": 0,
        "candidate_ms": [0.1 * scale] * 20,
        "eager_ms": [0.127 * scale] * 20,
        "graphs": candidate_graphs,
        "reps": 20,
        "received_at": 1.0,
    }
    # The wall clock of the timed phase: twice the 40 calls' claimed time, a plausible overhead.
    begin = {"event": "timing_begin", "shape": 0, "received_at": 1.0 - 40 * 0.227 * scale / 1e3}
    candidate = Outcome(0, False, 1.0, messages=[begin, end])
    baselines = {"event": "baselines", "shape": 0, "graphs": judge_graphs}
    judge_ms = [judge_eager_ms * scale] * 20
    judge = Outcome(0, False, 1.0, messages=[{**baselines, "eager_ms": judge_ms}])
    score_performance(result, SILU, shapes, candidate, judge)
    return {flag.code for flag in result.flags}, result


def test_eager_times_disagreeing_under_one_timing_method_is_timing_tampered():
    codes = timing_flags(candidate_graphs=False, judge_graphs=False, judge_eager_ms=0.0307)
    assert "timing_tampered" in codes
    assert "timing_tampered" not in timing_flags(
        candidate_graphs=False, judge_graphs=False, judge_eager_ms=0.120
    )


def test_launch_bound_eager_times_disagreeing_take_the_judges_and_flag_nothing():
    # At 0.03 ms the judge's eager is launch-bound: the candidate's process (interleaving, the
    # profiler run on its first case) measures such calls 2-4x slower with no tampering. The
    # speedup is then taken against the judge's eager time: 0.0307 / 0.1, not 0.127 / 0.1.
    codes, result = timing_result(
        candidate_graphs=False, judge_graphs=False, judge_eager_ms=0.0307, scale=1.0
    )
    assert "timing_tampered" not in codes
    assert result.summary["speedup_vs_eager"] == pytest.approx(0.307)
    assert result.per_shape[0].eager_ms == pytest.approx(0.0307)
    assert result.gates["performance"].detail["eager_from_judge"] == [0]
    # Within the slack, the eager time interleaved with the solution stands.
    codes, result = timing_result(
        candidate_graphs=False, judge_graphs=False, judge_eager_ms=0.120, scale=1.0
    )
    assert result.summary["speedup_vs_eager"] == pytest.approx(1.27)
    assert result.gates["performance"].detail["eager_from_judge"] == []


def test_eager_from_graphs_against_eager_from_plain_launches_is_not_compared():
    # A solution whose graphs cannot be captured is timed from plain launches, and so is the
    # eager reference beside it; the judge's eager from graphs would look 4x faster.
    codes = timing_flags(candidate_graphs=False, judge_graphs=True, judge_eager_ms=0.0307)
    assert "timing_tampered" not in codes
