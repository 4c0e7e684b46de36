"""The inputs a solution is checked on: per shape, several seeds and input distributions.

Both the candidate child and the judge child call `case_inputs` with the same case and get
the same tensors (same seed, same device, same torch), so inputs never travel between them: a
candidate that tampers with input generation in its own process only hurts itself.

A task's stress cases (KernelBench-Hard's numeric stress, taskspec.StressCase) rerun the first
seed of each visible shape with some inputs and some of the model's state scaled, in both
children alike; their tolerance is absolute, as written for that scale.
"""

import contextlib
import random
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from grader.modules import apply_shape

# Seen shapes: the problem's own inputs under three seeds, then one case per other distribution.
SEEN_DISTRIBUTIONS = ("problem", "problem", "problem", "normal", "scaled", "outliers")
UNSEEN_DISTRIBUTIONS = ("problem", "normal")
OUTLIER_FRACTION = 0.001
OUTLIER_SCALE = 1000.0
SCALED_FACTOR = 100.0
# Timing rotates among this many input sets, drawn from seeds no correctness case uses; the
# candidate's process and the judge's draw the same ones, so their eager times compare.
TIMING_INPUT_SETS = 3
TIMING_SEED = 1000


@dataclass(frozen=True)
class Case:
    seed: int
    distribution: str
    # The name of the task's stress case whose scales apply on top; "" for none.
    stress: str = ""

    @property
    def key(self) -> str:
        return f"{self.seed}-{self.distribution}" + (f"-{self.stress}" if self.stress else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "distribution": self.distribution,
            **({"stress": self.stress} if self.stress else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Case":
        return cls(data["seed"], data["distribution"], data.get("stress", ""))


# A task's own stress cases take the place of these: its author set the scales at which the
# problem is well posed. The generic ones are not for every problem (softmax attention with
# inputs scaled by 100 turns one bf16 rounding of the scaled query into errors far past the
# tolerance, in a kernel as in the reference).
GENERIC_STRESS = ("scaled", "outliers")


def cases_for(*, seen: bool, base_seed: int, stress: Sequence[str] = ()) -> list[Case]:
    """A shape's cases; on a visible shape, then one per stress case, on the first seed's
    problem inputs (unseen shapes run none). Where a task has stress cases they replace the
    generic scaled and outlier distributions (GENERIC_STRESS)."""
    distributions: tuple[str, ...] = SEEN_DISTRIBUTIONS if seen else UNSEEN_DISTRIBUTIONS
    if seen and stress:
        distributions = tuple(d for d in distributions if d not in GENERIC_STRESS)
    cases = [Case(base_seed + i, d) for i, d in enumerate(distributions)]
    if seen:
        cases += [Case(base_seed, "problem", name) for name in stress]
    return cases


class StressError(ValueError):
    """A stress case the task's reference cannot take (an input it does not have, a state it
    lacks): the task's error, never a solution's."""


@dataclass(frozen=True)
class Stress:
    """A stress case as a grader child applies it, its tolerance already resolved."""

    name: str
    input_scales: dict[int, float]
    state_scales: dict[str, float]
    atol: float
    rtol: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input_scales": {str(k): v for k, v in self.input_scales.items()},
            "state_scales": dict(self.state_scales),
            "atol": self.atol,
            "rtol": self.rtol,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Stress":
        inputs = {int(k): float(v) for k, v in data["input_scales"].items()}
        states = {str(k): float(v) for k, v in data["state_scales"].items()}
        return cls(data["name"], inputs, states, float(data["atol"]), float(data["rtol"]))


def stress_inputs(stress: Stress, inputs: list[Any]) -> list[Any]:
    """The inputs with the stress case's factors applied; StressError where one cannot be."""
    scaled = list(inputs)
    for index, factor in stress.input_scales.items():
        if index >= len(scaled):
            raise StressError(
                f"stress case {stress.name}: input {index} is out of range "
                f"(get_inputs() returns {len(scaled)} values)"
            )
        if not _is_float_tensor(scaled[index]):
            kind = getattr(scaled[index], "dtype", type(scaled[index]).__name__)
            raise StressError(
                f"stress case {stress.name}: input {index} is not a floating-point tensor ({kind})"
            )
        scaled[index] = scale_tensor(scaled[index], factor)
    return scaled


def state_problems(stress: Stress, model: Any) -> list[str]:
    """What keeps the stress case from scaling a model's state: names it lacks, or holds in a
    dtype that is not floating point."""
    state = _named_state(model)
    problems = []
    for name in stress.state_scales:
        if name not in state:
            problems.append(f"has no parameter or buffer {name!r}")
        elif not state[name].is_floating_point():
            problems.append(f"holds {name!r} as {state[name].dtype}, not floating point")
    return problems


@contextlib.contextmanager
def scaled_state(stress: Stress | None, model: Any) -> Iterator[None]:
    """The model's named state scaled for the block, put back as it was afterwards (the model
    serves the cases after it)."""
    if stress is None or not stress.state_scales:
        yield
        return
    state = _named_state(model)
    backups: list[tuple[torch.Tensor, torch.Tensor]] = []
    try:
        with torch.no_grad():
            for name, factor in stress.state_scales.items():
                backups.append((state[name], state[name].detach().clone()))
                state[name].copy_(scale_tensor(state[name], factor))
        yield
    finally:
        with torch.no_grad():
            for tensor, original in backups:
                tensor.copy_(original)


def scale_tensor(x: torch.Tensor, factor: float) -> torch.Tensor:
    # As KernelBench-Hard scales: in float32, rounded back to the tensor's own dtype.
    return (x.float() * factor).to(x.dtype)


def _named_state(model: Any) -> dict[str, torch.Tensor]:
    return {**dict(model.named_parameters()), **dict(model.named_buffers())}


def seed_all(seed: int) -> None:
    """torch's generators, and Python's and NumPy's, which some problems draw their inputs from
    (AgentKernelArena's harnesses use numpy.random): NumPy's only where the problem imported
    it, as the engine itself does not."""
    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


def case_inputs(module: ModuleType, shape: dict[str, int], case: Case, device: str) -> list[Any]:
    """Draw the inputs on the device itself: factory calls inside get_inputs() land there."""
    apply_shape(module, shape)
    seed_all(case.seed)
    with torch.device(device):
        inputs = [to_device(x, device) for x in module.get_inputs()]
    generator = torch.Generator(device=device).manual_seed(case.seed + 7919)
    transform = _TRANSFORMS[case.distribution]
    return [transform(x, generator) if _is_float_tensor(x) else x for x in inputs]


# Input sets rotate between timed calls so that a call does not find its inputs in the L2 cache
# left warm by the one before; a set larger than this no cache holds, and more copies of it would
# only take the device memory a large problem needs.
ROTATE_BELOW_BYTES = 256 * 1024**2


def timing_input_sets(module: ModuleType, shape: dict[str, int], device: str) -> list[list[Any]]:
    """TIMING_INPUT_SETS sets of the problem's inputs, or one where a set is too large for any
    cache (ROTATE_BELOW_BYTES); callers rotate over len() of what is returned."""
    first = case_inputs(module, shape, Case(TIMING_SEED, "problem"), device)
    if tensor_bytes(first) >= ROTATE_BELOW_BYTES:
        return [first]
    return [first] + [
        case_inputs(module, shape, Case(TIMING_SEED + k, "problem"), device)
        for k in range(1, TIMING_INPUT_SETS)
    ]


def to_device(value: Any, device: str) -> Any:
    return value.to(device) if isinstance(value, torch.Tensor) else value


def tensor_bytes(values: list[Any]) -> int:
    """Bytes of the tensors among values, each tensor counted once."""
    seen: set[int] = set()
    total = 0
    for value in values:
        if isinstance(value, torch.Tensor) and id(value) not in seen:
            seen.add(id(value))
            total += value.numel() * value.element_size()
    return total


def _is_float_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _problem(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return x


def _normal(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    # Signed, zero-mean values: an identity or abs kernel cannot pass on nonnegative inputs.
    noise = torch.randn(x.shape, generator=generator, device=x.device, dtype=torch.float32)
    return noise.to(x.dtype)


def _scaled(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return scale_tensor(x, SCALED_FACTOR)


def _outliers(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    if x.numel() == 0:
        return x
    picks = torch.rand(x.shape, generator=generator, device=x.device) < OUTLIER_FRACTION
    return torch.where(picks, x.float() * OUTLIER_SCALE, x.float()).to(x.dtype)


_TRANSFORMS: dict[str, Callable[[torch.Tensor, torch.Generator], torch.Tensor]] = {
    "problem": _problem,
    "normal": _normal,
    "scaled": _scaled,
    "outliers": _outliers,
}
