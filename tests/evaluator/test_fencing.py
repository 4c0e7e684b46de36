"""Each claim of an evaluation is an attempt with a number of its own (its fencing token): only
the attempt that still holds the row renews its lease and stores a verdict; a heartbeat that
finds the row taken over stops its grading."""

import threading
import time
import uuid
from datetime import timedelta
from functools import partial

import pytest
from django.test import override_settings
from django.utils import timezone

from evaluator import services
from evaluator.heartbeat import Heartbeat
from evaluator.models import Evaluation
from evaluator.services import (
    evaluation_claim,
    evaluation_lease_renew,
    evaluation_run,
    evaluation_store_result,
)
from grader import EvaluateOptions, EvaluationStopped, evaluate, load_task
from tasks.models import Task
from tests.arena.test_settings import load_settings
from tests.processes import processes_called
from tests.waiting import wait_for


def queued() -> Evaluation:
    return Evaluation.objects.create(
        task=Task.objects.get(slug="silu"),
        task_version="v1",
        solution_code="class ModelNew:\n    pass\n",
        solution_sha256="0" * 64,
    )


def lease_runs_out(evaluation: Evaluation) -> None:
    """As when its worker died: the lease is in the past, nobody renews it."""
    past = timezone.now() - timedelta(seconds=1)
    Evaluation.objects.filter(pk=evaluation.pk).update(lease_expires_at=past)


def verdict(status: str, reward: float | None, shapes: int) -> dict:
    row = {
        "shape": {"N": 4096},
        "seen": True,
        "correct": status == "passed",
        "reason": "",
        "max_abs_err": 0.0,
        "max_rel_err": 0.0,
        "candidate_ms": None,
        "eager_ms": None,
        "compile_ms": None,
        "sota_ms": None,
        "tflops": None,
        "gbps": None,
        "roofline_fraction": None,
    }
    return {
        "status": status,
        "device": "cpu",
        "reward": reward,
        "ranked": False,
        "task_version": "v1",
        "per_shape": [row] * shapes,
    }


class FakeResult:
    def __init__(self, data: dict) -> None:
        self.data = data

    def to_dict(self) -> dict:
        return self.data


@pytest.mark.django_db
def test_each_claim_is_a_new_attempt_under_a_short_lease(catalog_tasks):
    evaluation = queued()
    with override_settings(ARENA_GRADER_LEASE_S=60):
        assert evaluation_claim(evaluation_id=evaluation.pk) == 1
    evaluation.refresh_from_db()
    left_s = (evaluation.lease_expires_at - timezone.now()).total_seconds()
    assert 58 < left_s <= 60
    assert evaluation_claim(evaluation_id=evaluation.pk) is None  # held under a live lease
    lease_runs_out(evaluation)
    assert evaluation_claim(evaluation_id=evaluation.pk) == 2
    assert Evaluation.objects.get(pk=evaluation.pk).attempts == 2


@pytest.mark.django_db
def test_a_verdict_of_an_attempt_taken_over_writes_nothing(catalog_tasks):
    evaluation = queued()
    assert evaluation_claim(evaluation_id=evaluation.pk) == 1
    lease_runs_out(evaluation)
    assert evaluation_claim(evaluation_id=evaluation.pk) == 2
    closed = []
    late = evaluation_store_result(
        evaluation=evaluation,
        data=verdict("passed", 3.0, shapes=2),
        attempt=1,
        then=lambda: closed.append(1),
    )
    assert late is None and closed == []
    row = Evaluation.objects.get(pk=evaluation.pk)
    assert (row.status, row.attempts, row.result, row.finished_at) == ("running", 2, {}, None)
    assert row.lease_expires_at is not None and row.shapes.count() == 0
    # The attempt that holds it stores its verdict, and what follows in the same transaction.
    stored = evaluation_store_result(
        evaluation=evaluation,
        data=verdict("failed", -2.0, shapes=3),
        attempt=2,
        then=lambda: closed.append(2),
    )
    assert stored is not None and (stored.status, stored.reward) == ("failed", -2.0)
    assert stored.shapes.count() == 3 and stored.lease_expires_at is None and closed == [2]


@pytest.mark.django_db
def test_a_late_verdict_never_replaces_the_verdict_of_the_attempt_that_took_over(catalog_tasks):
    evaluation = queued()
    evaluation_claim(evaluation_id=evaluation.pk)
    lease_runs_out(evaluation)
    evaluation_claim(evaluation_id=evaluation.pk)
    evaluation_store_result(evaluation=evaluation, data=verdict("failed", -2.0, 3), attempt=2)
    before = Evaluation.objects.get(pk=evaluation.pk)
    assert (
        evaluation_store_result(evaluation=before, data=verdict("passed", 3.0, 1), attempt=1)
        is None
    )
    after = Evaluation.objects.get(pk=evaluation.pk)
    assert (after.status, after.reward, after.finished_at, after.result) == (
        "failed",
        -2.0,
        before.finished_at,
        before.result,
    )
    assert after.shapes.count() == 3
    # Nor a second store of the same attempt: the row is finished.
    assert (
        evaluation_store_result(evaluation=after, data=verdict("passed", 3.0, 1), attempt=2) is None
    )


@pytest.mark.django_db
def test_a_heartbeat_extends_only_the_lease_of_the_attempt_that_holds_it(catalog_tasks):
    evaluation = queued()
    with override_settings(ARENA_GRADER_LEASE_S=60):
        evaluation_claim(evaluation_id=evaluation.pk)
        lease_runs_out(evaluation)  # a beat late, but nobody took it over meanwhile
        assert evaluation_lease_renew(evaluation_id=evaluation.pk, attempt=1)
        renewed = Evaluation.objects.get(pk=evaluation.pk).lease_expires_at
        assert (renewed - timezone.now()).total_seconds() > 58
        lease_runs_out(evaluation)
        assert evaluation_claim(evaluation_id=evaluation.pk) == 2
        assert not evaluation_lease_renew(evaluation_id=evaluation.pk, attempt=1)
        assert evaluation_lease_renew(evaluation_id=evaluation.pk, attempt=2)


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_keeps_a_lease_alive_until_another_attempt_holds_the_row(catalog_tasks):
    evaluation = queued()
    with override_settings(ARENA_GRADER_LEASE_S=2):
        evaluation_claim(evaluation_id=evaluation.pk)
        renew = partial(evaluation_lease_renew, evaluation_id=evaluation.pk, attempt=1)
        with Heartbeat(renew=renew, interval_s=0.2, name="test beat") as beat:
            time.sleep(3)  # longer than the lease
            assert evaluation_claim(evaluation_id=evaluation.pk) is None
            assert not beat.lost.is_set()
            lease_runs_out(evaluation)  # the beats stop arriving, say, and another worker claims
            assert evaluation_claim(evaluation_id=evaluation.pk) == 2
            wait_for(beat.lost.is_set, timeout_s=5, what="the heartbeat to see the takeover")
        assert not beat.is_alive()


@pytest.mark.django_db(transaction=True)
def test_a_grading_taken_over_stops_at_its_next_heartbeat_and_stores_nothing(
    catalog_tasks, monkeypatch
):
    evaluation = queued()
    stopped_after_s = []

    def grade_while_another_worker_takes_over(evaluation, *, stop: threading.Event):
        lease_runs_out(evaluation)
        assert evaluation_claim(evaluation_id=evaluation.pk) == 2
        started = time.monotonic()
        if stop.wait(timeout=30):  # the engine ends the child it runs, and starts no other
            stopped_after_s.append(time.monotonic() - started)
            raise EvaluationStopped("the caller stopped the evaluation")
        return FakeResult(verdict("passed", 3.0, 1))

    monkeypatch.setattr(services, "_grade", grade_while_another_worker_takes_over)
    closed = []
    with override_settings(ARENA_GRADER_LEASE_S=2, ARENA_GRADER_HEARTBEAT_S=1):
        assert evaluation_run(evaluation_id=evaluation.pk, then=lambda: closed.append(1)) is None
    assert stopped_after_s and stopped_after_s[0] < 3
    row = Evaluation.objects.get(pk=evaluation.pk)
    assert (row.status, row.attempts, row.shapes.count(), closed) == ("running", 2, 0, [])


@pytest.mark.django_db
def test_a_grader_error_of_an_attempt_taken_over_writes_nothing(catalog_tasks, monkeypatch):
    evaluation = queued()

    def fail_after_a_takeover(evaluation, *, stop):
        lease_runs_out(evaluation)
        evaluation_claim(evaluation_id=evaluation.pk)
        raise OSError("no space left on device")

    monkeypatch.setattr(services, "_grade", fail_after_a_takeover)
    assert evaluation_run(evaluation_id=evaluation.pk) is None
    row = Evaluation.objects.get(pk=evaluation.pk)
    assert (row.status, row.error, row.attempts) == ("running", "", 2)


def test_a_heartbeat_longer_than_half_the_lease_stops_start_up(tmp_path):
    env = {"ARENA_SECRET_KEY": "k" * 50, "ARENA_GRADER_LEASE_S": "60"}
    refused = load_settings({**env, "ARENA_GRADER_HEARTBEAT_S": "31"}, "1", tmp_path)
    assert refused.returncode != 0
    assert "ARENA_GRADER_HEARTBEAT_S=31 is more than half of ARENA_GRADER_LEASE_S=60" in (
        refused.stderr
    )
    allowed = load_settings(env, "s.ARENA_GRADER_LEASE_S, s.ARENA_GRADER_HEARTBEAT_S", tmp_path)
    assert allowed.stdout.split() == ["60", "15"]


def test_a_stopped_evaluation_kills_its_running_child_and_ends_without_a_verdict(tmp_path):
    name = f"stop{uuid.uuid4().hex[:11]}"  # the kernel keeps 15 characters of a name
    solution = tmp_path / "hangs.py"
    solution.write_text(
        f"import ctypes, time\nctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0)\ntime.sleep(300)\n"
    )
    stop = threading.Event()
    stopped_at = []

    def stop_once_the_candidate_runs() -> None:
        wait_for(lambda: processes_called(name), timeout_s=90, what="the candidate to start")
        stopped_at.append(time.monotonic())
        stop.set()

    threading.Thread(target=stop_once_the_candidate_runs, daemon=True).start()
    with pytest.raises(EvaluationStopped):
        evaluate(load_task("silu"), solution, "cpu", EvaluateOptions(timeout_s=120, stop=stop))
    assert time.monotonic() - stopped_at[0] < 10
    assert not processes_called(name)
