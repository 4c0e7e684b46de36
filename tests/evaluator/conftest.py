"""Fixtures the grader's tests share."""

import pytest

from grader import prepared as prepared_module


@pytest.fixture
def pool(monkeypatch):
    """A pool of prepared slots of the test's own, closed after it: no slot one test started
    reaches another."""
    fresh = prepared_module.Pool()
    monkeypatch.setattr(prepared_module, "POOL", fresh)
    yield fresh
    fresh.close()
