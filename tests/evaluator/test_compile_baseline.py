"""The torch.compile baseline carried over from a cached baseline, and one cached without it."""

import pytest

from grader.scoring import _compile_ms


def test_a_measured_compile_time_is_its_median():
    assert _compile_ms({"compile_ms": [3.0, 1.0, 2.0]}, None, 1.0) == pytest.approx(2.0)


def test_a_cached_compile_time_is_scaled_by_todays_eager_time():
    # Cached: compiled 2 ms against eager 4 ms; today eager takes 6 ms, so compiled 3 ms.
    assert _compile_ms({}, {"compile_ms": 2.0, "eager_ms": 4.0}, 6.0) == pytest.approx(3.0)


def test_a_cached_baseline_without_a_compile_time_gives_none_not_a_crash():
    # A baseline cached with compile_baseline off holds compile_ms None: later gradings of the
    # task must still score, with no torch.compile speedup.
    assert _compile_ms({}, {"compile_ms": None, "eager_ms": 4.0}, 6.0) is None
    assert _compile_ms({}, {"eager_ms": 4.0}, 6.0) is None
