import pytest

from grader.formulas import (
    FormulaError,
    formula_evaluate,
    formula_names,
    relation_holds,
    relation_names,
)


def test_evaluates_arithmetic_over_dimension_names():
    assert formula_evaluate("2 * M * N * K + M * N", {"M": 4, "N": 8, "K": 16}) == 1056
    assert formula_evaluate("(B * H) ** 2 // 3", {"B": 3, "H": 1}) == 3
    assert formula_names("2 * M * N * K") == {"M", "N", "K"}


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "N.bit_length()",
        "[N]",
        "N if N else 1",
        "lambda: 1",
        "open('x')",
        "N ** 99",
    ],
)
def test_rejects_anything_but_plain_arithmetic(expression):
    with pytest.raises(FormulaError):
        formula_evaluate(expression, {"N": 2})


def test_names_an_unknown_dimension():
    with pytest.raises(FormulaError, match="unknown dimension 'K'"):
        formula_evaluate("N * K", {"N": 2})


def test_relations_compare_arithmetic_and_may_chain():
    dims = {"M": 128, "N": 64, "K": 512, "group": 4}
    assert relation_holds("K % group == 0", dims)
    assert not relation_holds("M <= N", dims)
    assert relation_holds("N < M <= 4 * N != K", dims)
    assert not relation_holds("N < M < N + 1", dims)
    assert relation_holds("(M + N) // 3 >= 64", dims)
    assert relation_names("K % group == 0") == {"K", "group"}


@pytest.mark.parametrize(
    "expression",
    [
        "N",
        "N + 1",
        "__import__('os').system('true') == 0",
        "N.real == 2",
        "N < 3 and N > 1",
        "not N == 1",
        "N in [2]",
        "N is 2",
        "(N < 3) == 1",
        "len('ab') == N",
        "N == N if N else 1",
        "N ** 99 > 0",
    ],
)
def test_rejects_relations_that_are_not_one_comparison_of_arithmetic(expression):
    with pytest.raises(FormulaError):
        relation_holds(expression, {"N": 2})


def test_formulas_still_reject_comparisons():
    with pytest.raises(FormulaError, match="Compare is not allowed"):
        formula_evaluate("N < 2", {"N": 1})
    with pytest.raises(FormulaError):
        formula_names("N == 2")


def test_refuses_powers_that_would_build_enormous_numbers():
    with pytest.raises(FormulaError, match="too large"):
        formula_evaluate("((N ** 8) ** 8) ** 8", {"N": 2**20})
    assert formula_evaluate("N ** 8", {"N": 2**20}) == 2.0**160
