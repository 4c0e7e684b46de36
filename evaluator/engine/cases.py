"""The inputs a solution is checked on: per shape, several seeds and input distributions.

Both the candidate child and the judge child call `case_inputs` with the same case and get
the same tensors (same seed, same device, same torch), so inputs never travel between them: a
candidate that tampers with input generation in its own process only hurts itself.
"""

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from evaluator.engine.modules import apply_shape

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

    @property
    def key(self) -> str:
        return f"{self.seed}-{self.distribution}"


def cases_for(*, seen: bool, base_seed: int) -> list[Case]:
    distributions = SEEN_DISTRIBUTIONS if seen else UNSEEN_DISTRIBUTIONS
    return [Case(base_seed + i, d) for i, d in enumerate(distributions)]


def case_inputs(module: ModuleType, shape: dict[str, int], case: Case, device: str) -> list[Any]:
    """Draw the inputs on the device itself: factory calls inside get_inputs() land there."""
    apply_shape(module, shape)
    torch.manual_seed(case.seed)
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
    return (x.float() * SCALED_FACTOR).to(x.dtype)


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
