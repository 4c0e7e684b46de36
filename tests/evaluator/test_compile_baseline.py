"""The torch.compile baseline carried over from a cached baseline, and one cached without it;
the cache shared by several grading processes."""

import multiprocessing
from pathlib import Path

import pytest

from grader.baselines import cache_load, cache_store
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


def _store_many(path: str, writer: int, count: int) -> None:
    for n in range(count):
        cache_store(Path(path), {f"{writer}-{n}": {"eager_ms": float(n)}})


def test_grading_processes_storing_at_once_keep_every_entry(tmp_path):
    # The grading processes of one GPU worker share its baseline and probe caches; each store
    # reads, merges and writes the file. Unlocked, two stores at once lose one's entries.
    path = tmp_path / "baselines.json"
    writers, count = 4, 60
    spawn = multiprocessing.get_context("spawn")
    processes = [
        spawn.Process(target=_store_many, args=(str(path), w, count)) for w in range(writers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    stored = cache_load(path)
    assert len(stored) == writers * count
    assert stored["3-59"] == {"eager_ms": 59.0}
