"""The inputs the grader draws: timing sets rotate only while a set fits in a cache."""

import random
import types

import numpy
import torch

from grader.cases import (
    ROTATE_BELOW_BYTES,
    TIMING_INPUT_SETS,
    Case,
    case_inputs,
    timing_input_sets,
)


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


def test_inputs_drawn_from_numpy_and_random_are_the_same_in_every_process():
    module = types.ModuleType("problem")
    module.get_inputs = lambda: [  # type: ignore[attr-defined]
        torch.from_numpy(numpy.random.randint(0, 1000, size=(4, 8))),
        torch.tensor([random.random() for _ in range(8)]),
        torch.rand(8),
    ]
    first = case_inputs(module, {}, Case(7, "problem"), "cpu")
    # Another process's generators stand anywhere: the case's seed sets all three.
    numpy.random.rand(3)
    random.random()
    torch.rand(3)
    again = case_inputs(module, {}, Case(7, "problem"), "cpu")
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    other = case_inputs(module, {}, Case(8, "problem"), "cpu")
    assert not any(torch.equal(a, b) for a, b in zip(first, other, strict=True))
