"""The checks a solution passes before it is graded: size, text, Python, ModelNew."""

import pytest

from evaluator.solution_checks import SolutionRefused, solution_check, solution_decode

KERNEL = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


def refusal(code: str, name: str = "solution.py") -> str:
    with pytest.raises(SolutionRefused) as caught:
        solution_check(name=name, code=code)
    return caught.value.message


@pytest.mark.parametrize(
    "code",
    [
        KERNEL,
        "from mykernels import Fast as ModelNew\n",
        "import torch\nModelNew = torch.nn.Identity\n",
        "try:\n    import triton\nexcept ImportError:\n    triton = None\nelse:\n"
        "    class ModelNew:\n        pass\n",
    ],
)
def test_a_python_module_that_binds_model_new_passes(code):
    solution_check(name="solution.py", code=code)


def test_a_file_that_is_not_python_is_refused_naming_the_line():
    cuda = "__global__ void k(float* x) {\n  x[0] = 1;\n}\n"
    assert refusal(cuda, "kernel.cu").startswith("kernel.cu: not Python (line 1: ")


def test_a_module_without_model_new_is_refused():
    message = refusal("import torch\n\n\nclass Model(torch.nn.Module):\n    pass\n")
    assert message.startswith("solution.py: defines no ModelNew")
    # A ModelNew inside a function is not one the grader finds.
    assert "defines no ModelNew" in refusal("def make():\n    class ModelNew:\n        pass\n")


def test_a_solution_over_the_size_cap_is_refused(settings):
    settings.ARENA_MAX_SOLUTION_BYTES = 100
    assert refusal(KERNEL + "#" * 100) == "solution.py: larger than the 100-byte limit"


@pytest.mark.parametrize(
    ("raw", "why"),
    [(b"  \n", "the file is empty"), (b"\xff\xfe", "not UTF-8 text"), (b"x\x00", "NUL bytes")],
)
def test_an_uploaded_file_must_be_text(raw, why):
    with pytest.raises(SolutionRefused, match=why):
        solution_decode(raw, name="solution.py")
