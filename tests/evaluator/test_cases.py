"""The inputs the grader draws: timing sets rotate only while a set fits in a cache."""

import types

import torch

from evaluator.engine.cases import ROTATE_BELOW_BYTES, TIMING_INPUT_SETS, timing_input_sets


def problem(elements: int) -> types.ModuleType:
    module = types.ModuleType("problem")
    module.n = elements  # type: ignore[attr-defined]
    module.get_inputs = lambda: [torch.rand(module.n)]  # type: ignore[attr-defined]
    module.get_init_inputs = lambda: []  # type: ignore[attr-defined]
    return module


def test_small_inputs_rotate_over_distinct_sets():
    module = problem(1024)
    sets = timing_input_sets(module, {"n": 1024}, "cpu")
    assert len(sets) == TIMING_INPUT_SETS
    assert not torch.equal(sets[0][0], sets[1][0])


def test_inputs_larger_than_any_cache_are_drawn_once():
    elements = ROTATE_BELOW_BYTES // 4
    module = problem(elements)
    sets = timing_input_sets(module, {"n": elements}, "cpu")
    assert len(sets) == 1
    assert sets[0][0].numel() == elements
