"""What a KernelBench problem file lets the grader vary, found out from the problem itself.

A base constant is a positive int computed from literals alone (`N = 2048 * 2`). It is a shape
dimension when the shapes of get_inputs() depend on it: the source is re-executed on the meta
device with the constant changed and the input shapes compared. Constants that only reach
get_init_inputs() (kernel sizes, strides, groups, a reduction axis, a layer count) shape the
computation rather than the data and stay fixed, as do zero, negative, float and bool ones.

Each dimension's range (a quarter to twice its value) and step (channels divisible by groups,
an embedding by its heads) are then checked by running the reference on the meta device, so
the rules only produce shapes on which the reference itself runs. All of this costs no memory
and no compute: meta tensors have shapes but no data.
"""

import ast
import contextlib
import math
import sys
import time
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils.flop_counter import FlopCounterMode

from grader.cases import tensor_bytes
from grader.compiler_off import compiler_off
from grader.constants import Constant, execute_with, module_constants
from grader.generalization import kernelbench_rules

REQUIRED = ("Model", "get_inputs", "get_init_inputs")
LOW_FACTOR = 4  # dimensions scale down to a quarter ...
HIGH_FACTOR = 2  # ... and up to twice their visible value
# A problem whose visible forward pass takes longer than this on the meta device (a model that
# loops in Python over its steps) has its probes build the model and inputs but skip forward.
# Well above a cold process's first forward (lazy imports).
SLOW_FORWARD_S = 3.0
_MAX_STEP_PROBES = 8
NOTHING_TO_VARY = "the problem has nothing to vary"


# Recurrent layers' ops and their gates per hidden unit. On the meta device torch unrolls them
# step by step (17 s for a 6-layer bidirectional LSTM over 512 steps); their output shapes and
# matmul FLOPs follow from the arguments alone.
_RECURRENT_GATES = {torch.lstm: 4, torch.gru: 3, torch.rnn_tanh: 1, torch.rnn_relu: 1}


class _StayOnMeta(TorchFunctionMode):
    """Problems move what they make with `.cuda()`, `.cpu()` or `.to("cuda")`; a meta tensor
    has no data to copy, so there it stays where it is (a dtype asked for is still applied).
    Recurrent layers are given their outputs' shapes at once, their FLOPs kept in
    recurrent_flops (a FlopCounterMode sees none of them)."""

    def __init__(self) -> None:
        super().__init__()
        self.recurrent_flops = 0

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = dict(kwargs or {})
        tensor = args[0] if args else None
        if not isinstance(tensor, torch.Tensor) or not tensor.is_meta:
            return func(*args, **kwargs)
        # The padded form only: (input, hx, params, has_biases, layers, dropout, train,
        # bidirectional, batch_first); a packed sequence passes params, not a bool, fourth.
        if func in _RECURRENT_GATES and len(args) == 9 and isinstance(args[3], bool):
            return self._recurrent(_RECURRENT_GATES[func], *args)
        if func in (torch.Tensor.cuda, torch.Tensor.cpu):
            return tensor
        if func is torch.Tensor.to:
            convert: Any = func
            kwargs.pop("device", None)
            rest = [a.dtype if isinstance(a, torch.Tensor) else a for a in args[1:]]
            rest = [a for a in rest if not isinstance(a, (str, torch.device, int))]
            return convert(tensor, *rest, **kwargs) if rest or "dtype" in kwargs else tensor
        return func(*args, **kwargs)

    def _recurrent(
        self,
        gates: int,
        x: Any,
        hx: Any,
        params: Any,
        has_biases: bool,
        layers: int,
        dropout: float,
        train: bool,
        bidirectional: bool,
        batch_first: bool,
    ) -> tuple[Any, ...]:
        states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
        directions = 2 if bidirectional else 1
        steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
        # The weights of the first direction of each layer: (gates * hidden, inputs) and
        # (gates * hidden, recurrent size); a projection (LSTM's proj_size) follows them.
        per_layer = len(params) // (layers * directions)
        for layer in range(layers):
            w_ih, w_hh = params[layer * directions * per_layer : layer * directions * per_layer + 2]
            rows = int(w_ih.shape[0])
            step_flops = 2 * batch * rows * (int(w_ih.shape[1]) + int(w_hh.shape[1]))
            if rows // gates != int(w_hh.shape[1]):
                step_flops += 2 * batch * (rows // gates) * int(w_hh.shape[1])
            self.recurrent_flops += step_flops * steps * directions
        out_features = directions * int(states[0].shape[-1])
        shape = (batch, steps, out_features) if batch_first else (steps, batch, out_features)
        output = torch.empty(shape, dtype=x.dtype, device="meta")
        return (output, *(torch.empty_like(state, device="meta") for state in states))


@contextlib.contextmanager
def on_meta() -> Iterator[_StayOnMeta]:
    """Tensors made inside are meta tensors, and stay meta when the problem moves them. torch's
    compiler stays unimported (compiler_off.py): nothing is compiled on the meta device."""
    mode = _StayOnMeta()
    with compiler_off(), torch.device("meta"), mode:
        yield mode


class ProblemError(ValueError):
    """A problem file the grader cannot use; the message names the file and the constant."""


@dataclass
class ProblemAnalysis:
    constants: dict[str, Constant]
    # The dimensions that vary, at their visible values; everything else stays as written.
    shape: dict[str, int]
    rules: dict[str, Any]
    # Why each base int constant is held fixed.
    held: dict[str, str] = field(default_factory=dict)
    # flops, bytes and dtype of the visible shape (see count_work).
    work: dict[str, Any] = field(default_factory=dict)

    @property
    def fixed_reason(self) -> str:
        if self.rules:
            return ""
        if not self.held:
            return f"{NOTHING_TO_VARY}: it has no size constants"
        why = "; ".join(f"{name}: {reason}" for name, reason in self.held.items())
        return f"{NOTHING_TO_VARY} ({why})"


def parse_problem(path: Path) -> ast.Module:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise ProblemError(f"{path}: line {exc.lineno}: {exc.msg}") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for required in REQUIRED:
        if required not in defined:
            raise ProblemError(f"{path}: a KernelBench problem must define {required}")
    return tree


class _Problem:
    """One problem module, re-executed in place for each set of constants tried."""

    def __init__(self, path: Path, tree: ast.Module) -> None:
        self.path, self.tree = path, tree
        self.module = ModuleType(f"kernelbench_probe_{abs(hash(path))}")
        self.module.__file__ = str(path)
        sys.modules[self.module.__name__] = self.module
        self.build_on_meta = True
        self.run_forward = True

    def execute(self, values: Mapping[str, Any]) -> None:
        execute_with(self.module, self.tree, self.path, values)

    def signature(self, values: Mapping[str, Any]) -> tuple[Any, Any]:
        """(shapes of get_inputs(), values of get_init_inputs()) for these constants."""
        self.execute(values)
        torch.manual_seed(0)
        with on_meta():
            return _describe(self.module.get_inputs()), _describe(self.module.get_init_inputs())

    def build(self) -> tuple[torch.nn.Module, list[Any]]:
        torch.manual_seed(0)
        init_inputs = list(self.module.get_init_inputs())
        if self.build_on_meta:
            with on_meta():
                model = self.module.Model(*init_inputs)
        else:
            # Some constructors read values (`x.item()`): build real, then keep only shapes.
            model = self.module.Model(*init_inputs).to("meta")
        with on_meta():
            inputs = list(self.module.get_inputs())
        return model.eval(), inputs

    def runs(self, values: Mapping[str, Any]) -> bool:
        """Whether the reference builds and runs with these constants, on the meta device."""
        try:
            self.execute(values)
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")
                model, inputs = self.build()
                with on_meta():
                    output = model(*inputs) if self.run_forward else None
        except Exception:
            return False  # any failure means: not a shape the reference runs
        # The meta device does not check everything: a convolution wider than its input gives
        # an empty output there, but fails on a real device.
        return not _has_empty_tensor(inputs) and not _has_empty_tensor(output)

    def close(self) -> None:
        sys.modules.pop(self.module.__name__, None)


def _has_empty_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.numel() == 0
    if isinstance(value, (list, tuple)):
        return any(_has_empty_tensor(v) for v in value)
    return False


def _describe(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), str(value.dtype))
    if isinstance(value, (list, tuple)):
        return tuple(_describe(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _describe(v)) for k, v in sorted(value.items()))
    return value


def analyse_problem(path: Path, tree: ast.Module) -> ProblemAnalysis:
    """Find the problem's shape dimensions and the rules for drawing other shapes."""
    constants = module_constants(tree)
    problem = _Problem(path, tree)
    try:
        baseline = problem.signature({})
        work = _visible_work(problem, path)
        held: dict[str, str] = {}
        candidates = _input_dimensions(problem, constants, baseline, held)
        shape, steps, bounds = _checked_ranges(problem, candidates, held)
    finally:
        problem.close()
    rules = kernelbench_rules(shape, steps=steps, bounds=bounds) if shape else {}
    return ProblemAnalysis(constants=constants, shape=shape, rules=rules, held=held, work=work)


def _visible_work(problem: _Problem, path: Path) -> dict[str, Any]:
    """Run the visible shape once on the meta device, counting its work."""
    problem.execute({})
    try:
        problem.build()
    except Exception:
        problem.build_on_meta = False
    started = time.perf_counter()
    try:
        work = _count(problem)
    except Exception as exc:
        raise ProblemError(f"{path}: the reference does not run on the meta device: {exc}") from exc
    problem.run_forward = time.perf_counter() - started < SLOW_FORWARD_S
    return work


def _input_dimensions(
    problem: _Problem, constants: Mapping[str, Constant], baseline: Any, held: dict[str, str]
) -> dict[str, int]:
    """The base int constants whose change changes the shapes get_inputs() returns."""
    dims: dict[str, int] = {}
    for name, constant in constants.items():
        if not constant.is_base_int:
            continue
        value = int(constant.value)
        changed = _changed_signature(problem, name, value)
        if changed is None:
            held[name] = "changing it breaks the problem's inputs"
        elif changed[0] != baseline[0]:
            dims[name] = value
        elif changed[1] != baseline[1]:
            held[name] = "it only sets how the model is built"
        else:
            held[name] = "no input depends on it"
    return dims


def _changed_signature(problem: _Problem, name: str, value: int) -> Any:
    for trial in (value + 1, 2 * value):
        try:
            return problem.signature({name: trial})
        except Exception:  # noqa: S112 - try the next value
            continue
    return None


def _checked_ranges(
    problem: _Problem, candidates: dict[str, int], held: dict[str, str]
) -> tuple[dict[str, int], dict[str, int], dict[str, tuple[int, int]]]:
    shape: dict[str, int] = {}
    steps: dict[str, int] = {}
    bounds: dict[str, tuple[int, int]] = {}
    for name, value in candidates.items():
        step = _step(problem, name, value, candidates)
        if step is None:
            held[name] = "the reference does not run when it changes"
            continue
        low = _lowest(problem, name, value, step)
        high = _highest(problem, name, value, step)
        if low == high:
            held[name] = "the reference runs only at its visible value"
            continue
        shape[name], steps[name], bounds[name] = value, step, (low, high)
    _check_corners(problem, shape, bounds)
    for name in [n for n, (low, high) in bounds.items() if low == high]:
        held[name] = "the reference runs only at its visible value"
        del shape[name], steps[name], bounds[name]
    return shape, steps, bounds


def _step(problem: _Problem, name: str, value: int, others: Mapping[str, int]) -> int | None:
    """The smallest step the dimension can move by: 1, or a divisor the model needs."""
    divisors = {1 << k for k in range(1, value.bit_length())}
    divisors |= {v for v in others.values() if v >= 2}
    divisors |= {v for v in (c for c in _int_values(problem)) if v >= 2}
    candidates = [1, *sorted(d for d in divisors if value % d == 0 and d < value)]
    for step in candidates[:_MAX_STEP_PROBES]:
        if problem.runs({name: value + step}):
            return step
    return None


def _int_values(problem: _Problem) -> list[int]:
    values = [v for v in vars(problem.module).values() if type(v) is int]
    return sorted(set(values))


def _lowest(problem: _Problem, name: str, value: int, step: int) -> int:
    for fraction in (1 / LOW_FACTOR, 1 / 2, 3 / 4):
        low = max(step, math.ceil(value * fraction / step) * step)
        if low < value and problem.runs({name: low}):
            return low
    return value


def _highest(problem: _Problem, name: str, value: int, step: int) -> int:
    for factor in (HIGH_FACTOR, 3 / 2, 5 / 4):
        high = int(value * factor) // step * step
        if high > value and problem.runs({name: high}):
            return high
    return value


def _check_corners(
    problem: _Problem, shape: Mapping[str, int], bounds: dict[str, tuple[int, int]]
) -> None:
    """All dimensions at their lowest together, then at their highest; narrow what fails."""
    for side in (0, 1):
        for _ in range(3):
            corner = {name: bounds[name][side] for name in shape}
            if len(corner) < 2 or problem.runs(corner):
                break
            for name, value in shape.items():
                low, high = bounds[name]
                middle = (low + value) // 2 if side == 0 else (value + high) // 2
                bounds[name] = (middle, high) if side == 0 else (low, middle)
        else:
            for name, value in shape.items():
                low, high = bounds[name]
                bounds[name] = (value, high) if side == 0 else (low, value)


# ---- work of the visible shape -----------------------------------------------------------------


def count_work(path: Path, tree: ast.Module) -> dict[str, Any]:
    """flops, bytes moved and dtype of the problem's own shape, counted on the meta device."""
    problem = _Problem(path, tree)
    try:
        return _visible_work(problem, path)
    finally:
        problem.close()


def _count(problem: _Problem) -> dict[str, Any]:
    model, inputs = problem.build()
    counter = FlopCounterMode(display=False)
    with warnings.catch_warnings(), torch.no_grad(), on_meta() as meta, counter:
        warnings.simplefilter("ignore")
        output = model(*inputs)
    outputs = list(output) if isinstance(output, (list, tuple)) else [output]
    tensors = [*inputs, *model.parameters(), *model.buffers(), *outputs]
    floats = [t for t in inputs if isinstance(t, torch.Tensor) and t.is_floating_point()]
    dtype = str(floats[0].dtype).removeprefix("torch.") if floats else "float32"
    flops = counter.get_total_flops() + meta.recurrent_flops or sum(_numel(t) for t in outputs)
    return {"flops": int(flops), "bytes": tensor_bytes(tensors), "dtype": dtype}


def _numel(value: Any) -> int:
    return int(value.numel()) if isinstance(value, torch.Tensor) else 0


def runs_on_meta(path: Path, shape: Mapping[str, int]) -> bool:
    """Whether the reference builds and runs on this shape, checked on the meta device.

    For a grader that draws shapes: a drawn shape on which this is False is to be redrawn.
    """
    problem = _Problem(path, parse_problem(path))
    try:
        return problem.runs(shape)
    finally:
        problem.close()
