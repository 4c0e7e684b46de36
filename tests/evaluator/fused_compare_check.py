"""Run by test_fused_compare.py in a process of its own (Triton's interpreter on the CPU, or
the GPU): grader/fused_compare.py's passes against compare.py's chunked path on outputs with
noise, NaN, Inf, mismatched specials and tiny magnitudes, in every dtype it loads. Prints one
line per case; any difference raises."""

import sys

import torch

from grader import compare
from grader import fused_compare as fused


def cases(device: str, size: int):
    generator = torch.Generator().manual_seed(0)
    for dtype in fused.FUSED_DTYPES:
        want = torch.randn(size, generator=generator).to(dtype)
        noise = 1e-3 * torch.randn(size, generator=generator, dtype=torch.float64)
        yield "same", want, want.clone()
        yield "noisy", want, (want.double() + noise).to(dtype)
        specials = want.clone()
        specials[5], specials[7], specials[size - 1] = float("nan"), float("inf"), float("-inf")
        yield "nan and inf where the reference has them", specials, specials.clone()
        flipped = specials.clone()
        flipped[7] = float("-inf")
        yield "an inf of the other sign", specials, flipped
        nan = want.clone()
        nan[3] = float("nan")
        yield "nan where the reference is finite", want, nan
        yield "tiny outputs", want * 1e-6, (want * 1e-6) * 1.5
    del device


def main(device: str, size: int) -> None:
    for name, want, got in cases(device, size):
        want, got = want.to(device), got.to(device)
        chunk = 997
        expected_place = compare._special_placement(want, got, chunk)
        place, rms = fused.placement_and_rms(want, got)
        assert place == expected_place, (name, want.dtype, place, expected_place)
        if place != "finite":
            expected_rms = compare._finite_rms(want, chunk)
            assert abs(rms - expected_rms) <= 1e-12 * max(1.0, expected_rms), (name, rms)
            for atol, rtol in ((1e-4, 1e-4), (1e-2, 0.0), (0.0, 0.0)):
                count, worst_abs, worst_rel = compare._errors(want, got, atol, rtol, chunk)
                f_count, f_abs, f_rel = fused.errors(want, got, atol, rtol)
                assert f_count == count, (name, want.dtype, atol, rtol, f_count, count)
                assert abs(f_abs - worst_abs) <= 1e-15, (name, f_abs, worst_abs)
                assert abs(f_rel - worst_rel) <= 1e-9 * max(1.0, worst_rel), (name, f_rel)
        print("same verdict:", name, want.dtype, place, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
