"""Outputs compared in chunks: the same verdicts as one float64 pass, in bounded memory."""

import subprocess
import sys
import textwrap

import pytest
import torch

from grader.compare import compare_outputs, precision_report


def float64_verdict(want, got, atol, rtol):
    """The comparison written out over whole tensors in float64: the definition chunks follow."""
    want64, got64 = want.double(), got.double()
    finite = torch.isfinite(want64)
    zeros = torch.zeros_like(want64)
    abs_err = (got64 - want64).abs().where(finite, zeros)
    rms = float(want64.where(finite, zeros).square().mean().sqrt())
    scale = max(rms, 1e-8) / 1e-2 if rms < 1e-2 else max(1.0, rms)
    bad = abs_err > atol * scale + rtol * want64.abs().where(finite, zeros)
    rel = (abs_err / want64.abs().clamp_min(1e-12)).where(finite, zeros)
    return int(bad.sum()), float(abs_err.max()), float(rel.max()), atol * scale


def noisy_pair(numel: int, noise: float, seed: int):
    generator = torch.Generator().manual_seed(seed)
    want = torch.randn(numel, generator=generator) * 3
    got = want + noise * torch.randn(numel, generator=generator)
    return want, got


@pytest.mark.parametrize("numel", [1, 7, 1000, 4099])
@pytest.mark.parametrize("chunk", [1, 3, 64, None])
def test_chunked_verdict_equals_the_float64_pass_on_odd_sizes(numel, chunk):
    want, got = noisy_pair(numel, 4e-4, seed=numel)
    count, max_abs, max_rel, atol = float64_verdict(want, got, 1e-4, 1e-4)
    verdict = compare_outputs([want], [got], atol=1e-4, rtol=1e-4, chunk_elements=chunk)
    assert verdict.max_abs_err == pytest.approx(max_abs, rel=1e-12)
    assert verdict.max_rel_err == pytest.approx(max_rel, rel=1e-12)
    assert verdict.correct is (count == 0)
    if count:
        assert verdict.reason.startswith(f"output 0: {count} of {numel} elements outside ")
        assert f"atol={atol:.3g} " in verdict.reason


def test_chunked_verdict_is_independent_of_the_chunk_size_on_a_2d_output():
    want, got = noisy_pair(37 * 41, 2e-4, seed=3)
    want, got = want.reshape(37, 41), got.reshape(37, 41)
    verdicts = {
        chunk: compare_outputs([want], [got], atol=1e-4, rtol=1e-4, chunk_elements=chunk)
        for chunk in (5, 41, 1000, None)
    }
    assert len({(v.correct, v.reason) for v in verdicts.values()}) == 1
    assert len({round(v.max_abs_err, 15) for v in verdicts.values()}) == 1


@pytest.mark.parametrize("chunk", [2, None])
def test_nan_and_inf_placement_is_checked_across_chunk_boundaries(chunk):
    want = torch.tensor([1.0, float("nan"), float("inf"), -2.0, 5.0])
    same = want.clone()
    assert compare_outputs([want], [same], atol=1e-4, rtol=1e-4, chunk_elements=chunk).correct
    extra_nan = want.clone()
    extra_nan[4] = float("nan")
    verdict = compare_outputs([want], [extra_nan], atol=1e-4, rtol=1e-4, chunk_elements=chunk)
    assert verdict.reason == "output 0 has NaN or Inf where the reference has none"
    wrong_sign = want.clone()
    wrong_sign[2] = float("-inf")
    verdict = compare_outputs([want], [wrong_sign], atol=1e-4, rtol=1e-4, chunk_elements=chunk)
    assert verdict.reason == "output 0 has NaN or Inf unlike the reference's"


def test_comparison_leaves_float64_outputs_untouched():
    want, got = noisy_pair(100, 1e-3, seed=4)
    want, got = want.double(), got.double()
    before = (want.clone(), got.clone())
    compare_outputs([want], [got], atol=1e-4, rtol=1e-4, chunk_elements=7)
    assert torch.equal(want, before[0]) and torch.equal(got, before[1])


def test_exact_dtypes_are_compared_chunk_by_chunk():
    want = torch.arange(1001)
    got = want.clone()
    assert compare_outputs([want], [got], atol=0, rtol=0, chunk_elements=10).correct
    got[997] += 1
    verdict = compare_outputs([want], [got], atol=0, rtol=0, chunk_elements=10)
    assert verdict.reason == "output 0 differs from the reference (exact dtype)"


def test_comparing_two_large_outputs_needs_far_less_than_a_float64_copy():
    # Run alone so that the peak resident size belongs to this comparison only.
    script = textwrap.dedent(
        """
        import resource, torch
        from grader.compare import compare_outputs
        numel = 1 << 25
        want = torch.randn(numel)
        got = want + 1e-6
        # Warm up: the first reductions load code and thread pools that stay resident.
        compare_outputs([want[: 1 << 21]], [got[: 1 << 21]], atol=1e-4, rtol=1e-4)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        verdict = compare_outputs([want], [got], atol=1e-4, rtol=1e-4)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert verdict.correct, verdict.reason
        print((after - before) * 1024, numel)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    growth_bytes, numel = map(int, out.split())
    # One float64 copy of the output is 8 * numel bytes (256 MiB); the unchunked comparison made
    # five or more (about 1 GiB here). Host chunks keep the growth to a few 8 MiB temporaries.
    assert growth_bytes < 8 * numel // 4, growth_bytes


def test_precision_report_is_skipped_where_float64_copies_would_not_fit(monkeypatch):
    model = torch.nn.Linear(8, 8)
    inputs = [torch.randn(4, 8)]
    with torch.no_grad():
        expected = [model(inputs[0])]
    assert precision_report(model, inputs, expected, expected) is not None
    monkeypatch.setattr("grader.compare.PRECISION_MAX_BYTES", 100)
    assert precision_report(model, inputs, expected, expected) is None


def test_unsigned_word_outputs_are_compared_bit_for_bit():
    words = torch.tensor([0, 7, 2**31, 2**32 - 1], dtype=torch.int64).to(torch.uint32)
    flipped = words.clone()
    flipped.view(torch.int32)[3] = 0
    assert compare_outputs([words], [words.clone()], atol=0.0, rtol=0.0).correct
    verdict = compare_outputs([words], [flipped], atol=0.0, rtol=0.0)
    assert not verdict.correct
    assert verdict.reason == "output 0 differs from the reference (exact dtype)"
