import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_rate, env_str


def test_env_bool_reads_common_spellings(monkeypatch):
    for raw, expected in [("1", True), ("yes", True), ("TRUE", True), ("0", False), ("off", False)]:
        monkeypatch.setenv("ARENA_FLAG", raw)
        assert env_bool("ARENA_FLAG") is expected


def test_env_bool_fails_loudly_on_a_typo(monkeypatch):
    monkeypatch.setenv("ARENA_FLAG", "ture")
    with pytest.raises(ImproperlyConfigured, match="ARENA_FLAG='ture' is not a boolean"):
        env_bool("ARENA_FLAG")


def test_env_int_rejects_non_integers_and_values_below_minimum(monkeypatch):
    monkeypatch.setenv("ARENA_N", "12s")
    with pytest.raises(ImproperlyConfigured, match="is not an integer"):
        env_int("ARENA_N", 5)
    monkeypatch.setenv("ARENA_N", "0")
    with pytest.raises(ImproperlyConfigured, match="below the minimum of 1"):
        env_int("ARENA_N", 5, minimum=1)


def test_defaults_apply_when_unset(monkeypatch):
    monkeypatch.delenv("ARENA_UNSET", raising=False)
    assert env_int("ARENA_UNSET", 7) == 7
    assert env_str("ARENA_UNSET", "x") == "x"
    assert env_list("ARENA_UNSET", ["a"]) == ["a"]


def test_env_rate_reads_a_count_per_unit_and_empty_turns_it_off(monkeypatch):
    monkeypatch.setenv("ARENA_R", "10/hour")
    assert env_rate("ARENA_R", "1/s") == (10, 3600)
    monkeypatch.setenv("ARENA_R", "30/min")
    assert env_rate("ARENA_R", "1/s") == (30, 60)
    monkeypatch.setenv("ARENA_R", "")
    assert env_rate("ARENA_R", "1/s") is None
    monkeypatch.delenv("ARENA_R")
    assert env_rate("ARENA_R", "2/day") == (2, 86400)


@pytest.mark.parametrize("raw", ["10", "10/fortnight", "x/hour", "0/hour", "10/3600s"])
def test_env_rate_names_the_variable_it_cannot_read(monkeypatch, raw):
    monkeypatch.setenv("ARENA_R", raw)
    with pytest.raises(ImproperlyConfigured, match=r"ARENA_R=.* is not a rate like 10/hour"):
        env_rate("ARENA_R", "1/s")
