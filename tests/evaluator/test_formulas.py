import pytest

from evaluator.engine.formulas import FormulaError, formula_evaluate, formula_names


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
