"""A candidate that cannot write a case's outputs because the grader's scratch space is full:
the grader's failure where the host sees the space full, the solution's where it does not."""

import shutil
from collections import namedtuple

import pytest

from grader.evaluate import _scratch_full
from sandboxes.backends import Outcome

Usage = namedtuple("Usage", "total used free")
GIB = 2**30


def says_full(event="error"):
    message = {"event": event, "stage": "scratch_full", "message": "OSError: [Errno 28]"}
    return Outcome(3, False, 1.0, messages=[message])


@pytest.mark.parametrize("event", ["error", "shape_error"])
def test_a_full_scratch_space_is_a_grader_error(monkeypatch, tmp_path, event):
    monkeypatch.setattr(shutil, "disk_usage", lambda _: Usage(64 * GIB, 64 * GIB - 2**20, 2**20))
    gate, reason, detail = _scratch_full(says_full(event), tmp_path)
    assert gate == "correctness"
    assert reason.startswith("grader error: the grader's scratch space for outputs is full")
    assert "not the solution's failure" in reason
    assert "Errno 28" in detail["error"]


def test_a_claim_the_host_does_not_see_is_not_a_grader_error(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "disk_usage", lambda _: Usage(64 * GIB, 10 * GIB, 54 * GIB))
    assert _scratch_full(says_full(), tmp_path) is None


def test_other_errors_are_not_read_as_a_full_scratch_space(tmp_path):
    outcome = Outcome(3, False, 1.0, messages=[{"event": "error", "stage": "runtime"}])
    assert _scratch_full(outcome, tmp_path) is None
