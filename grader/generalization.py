"""Generalization rules of a task, and the unseen shapes drawn from them at grading time.

Agents hard-code the shapes they are shown, so the grader re-checks correctness on shapes drawn
from the task's rules with a seed derived from a server-side secret. The drawn shapes exist only
for that grading: they are never written into the repository or an agent's workspace.

Rules, as TaskSpec.generalization holds them (JSON-ready):
    {"dims": {"N": {"min", "max", "cpu_max", "multiple_of", "power_of_two"}},
     "relations": ["K % group == 0"], "fixed": ["dim"]}
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import itertools
import json
import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.formulas import (
    FormulaError,
    formula_evaluate,
    relation_holds,
    relation_names,
)

if TYPE_CHECKING:
    from grader.taskspec import TaskSpec

Shape = dict[str, int]
KINDS = ("edge", "scale_up", "scale_down", "misaligned", "asymmetric")
EXTRA_KIND = "random"
RULE_KEYS = ("min", "max", "multiple_of", "power_of_two", "cpu_max")
# On CPU, Triton runs in a slow interpreter: drawn shapes may move at most this many times the
# bytes of the largest shape the task runs there.
CPU_BYTES_FACTOR = 4
# Unseen shapes stay within the sizes the problem poses: no tensor of an unseen shape holds more
# than this many times the elements of the largest tensor of the visible shapes. Drawing bounds
# an estimate of it (size_estimate); the probe, which runs the reference on the meta device,
# checks the tensors themselves (size_bound_holds). The same bound caps what one grading moves.
UNSEEN_SIZE_FACTOR = 2
# Signed 32-bit offsets reach 2**31 elements. A kernel written with them is correct for every
# size a problem poses below that; a failure that appears only past it, where every visible
# shape is below it, is that limit, not a shape the kernel was fitted to (index_limited).
INDEX_LIMIT_ELEMENTS = 2**31
# KernelBench shapes are sized for GPUs; on CPU a drawn dimension never exceeds its visible value
# nor this cap (unless its minimum is larger), so unseen CPU runs are never heavier than the
# visible one the CPU path already runs.
KERNELBENCH_CPU_CAP = 1024
# Bounds on the search, so a task whose relations are hard to satisfy fails fast, never hangs.
_ATTEMPTS = 8
_LINEAR_STEPS = 256
_REPAIRS = 4
_PAIR_STEPS = 16
_MISALIGNED_STEPS = 2048
_BLENDS = (0.25, 0.5, 0.75, 1.0)


class RuleError(ValueError):
    """A generalization rule that cannot be used; taskspec names the file around it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"field {field!r}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class UnseenShape:
    shape: dict[str, int]
    kind: str


def hidden_seed_material(secret: str, task_version: str, solution_hash: str) -> int:
    """The seed of one grading: keyed by the server's secret, so shapes cannot be predicted.

    Each solution and each task version draws different shapes, so a list of shapes that leaks
    from one grading helps no other; grading the same solution again draws the same shapes.
    """
    if not secret:
        raise ValueError("the hidden seed secret is empty: set ARENA_HIDDEN_SEED for the grader")
    message = json.dumps([task_version, solution_hash]).encode()
    digest = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest, "big")


# ---- reading rules -----------------------------------------------------------------------------


def rules_from_manifest(
    raw: object, *, visible: Sequence[Shape], cpu: Sequence[Shape]
) -> dict[str, Any]:
    """Validate a manifest's [generalization] table; raises RuleError naming the field."""
    if not isinstance(raw, dict):
        raise RuleError("generalization", "must be a table of per-dimension rules")
    names = list(visible[0])
    for key in raw:
        if key != "relations" and key not in names:
            raise RuleError(f"generalization.{key}", f"no visible shape names dimension {key!r}")
    dims = {name: _dim_rule(name, raw.get(name), visible=visible, cpu=cpu) for name in names}
    if all(len(_values(rule, rule["max"])) == 1 for rule in dims.values()):
        raise RuleError("generalization", "every dimension is pinned, so no unseen shape exists")
    relations = _relations(raw.get("relations", []), names, visible=visible, cpu=cpu)
    return {"dims": dims, "relations": relations, "fixed": []}


def _dim_rule(
    name: str, raw: object, *, visible: Sequence[Shape], cpu: Sequence[Shape]
) -> dict[str, Any]:
    where = f"generalization.{name}"
    if raw is None:
        raise RuleError(where, "missing: every dimension of visible_shapes needs a rule")
    if not isinstance(raw, dict):
        raise RuleError(where, "must be a table such as { min = 1, max = 4096 }")
    for key in raw:
        if key not in RULE_KEYS:
            raise RuleError(f"{where}.{key}", f"unknown setting; use {', '.join(RULE_KEYS)}")
    low, high = _positive(raw, "min", where), _positive(raw, "max", where)
    if low > high:
        raise RuleError(f"{where}.max", f"{high} is below min ({low})")
    step = _positive(raw, "multiple_of", where) if "multiple_of" in raw else 1
    powers = raw.get("power_of_two", False)
    if not isinstance(powers, bool):
        raise RuleError(f"{where}.power_of_two", "must be true or false")
    rule: dict[str, Any] = {"min": low, "max": high, "multiple_of": step, "power_of_two": powers}
    if not _values(rule, high):
        setting = "power_of_two" if powers else "multiple_of"
        raise RuleError(f"{where}.{setting}", f"no value in {low}..{high} satisfies it")
    for label, shapes in (("visible_shapes", visible), ("cpu_shapes", cpu)):
        for index, shape in enumerate(shapes):
            _check_value(rule, where, f"{label}[{index}]", shape[name])
    rule["cpu_max"] = _cpu_max(raw, rule, where, [s[name] for s in cpu], [s[name] for s in visible])
    return rule


def _positive(raw: dict[str, Any], key: str, where: str) -> int:
    value = raw.get(key)
    if value is None:
        raise RuleError(f"{where}.{key}", "is required")
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise RuleError(f"{where}.{key}", "must be a positive integer")
    return value


def _check_value(rule: Mapping[str, Any], where: str, label: str, value: int) -> None:
    name = where.rsplit(".", 1)[1]
    problems = (
        ("min", value < rule["min"], "below it"),
        ("max", value > rule["max"], "above it"),
        ("multiple_of", value % rule["multiple_of"] != 0, "not a multiple of it"),
        ("power_of_two", rule["power_of_two"] and not _is_power_of_two(value), "not a power of 2"),
    )
    for setting, broken, why in problems:
        if broken:
            raise RuleError(f"{where}.{setting}", f"{label} has {name} = {value}, {why}")


def _cpu_max(
    raw: dict[str, Any], rule: dict[str, Any], where: str, cpu: list[int], visible: list[int]
) -> int:
    if "cpu_max" not in raw:
        default = CPU_BYTES_FACTOR * max(cpu) if cpu else max(visible)
        return min(int(rule["max"]), default)
    cpu_max = _positive(raw, "cpu_max", where)
    if cpu_max > rule["max"]:
        raise RuleError(f"{where}.cpu_max", f"{cpu_max} is above max ({rule['max']})")
    if cpu and cpu_max < max(cpu):
        raise RuleError(f"{where}.cpu_max", f"{cpu_max} is below a cpu_shapes value ({max(cpu)})")
    if not _values(rule, cpu_max):
        raise RuleError(f"{where}.cpu_max", f"no value in {rule['min']}..{cpu_max} fits the rule")
    return cpu_max


def _relations(
    raw: object, names: list[str], *, visible: Sequence[Shape], cpu: Sequence[Shape]
) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(r, str) for r in raw):
        raise RuleError("generalization.relations", "must be a list of strings")
    for index, expression in enumerate(raw):
        where = f"generalization.relations[{index}]"
        try:
            unknown = relation_names(expression) - set(names)
        except FormulaError as exc:
            raise RuleError(where, str(exc)) from None
        if unknown:
            raise RuleError(where, f"unknown dimension(s) {', '.join(sorted(unknown))}")
        for label, shapes in (("visible_shapes", visible), ("cpu_shapes", cpu)):
            for shape_index, shape in enumerate(shapes):
                if not _relation_ok(expression, shape):
                    raise RuleError(where, f"{label}[{shape_index}] does not satisfy it")
    return list(raw)


def kernelbench_rules(
    shape: Mapping[str, int],
    *,
    steps: Mapping[str, int] | None = None,
    bounds: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, Any]:
    """Rules for a KernelBench problem's shape dimensions: each from a quarter to twice its value.

    `shape` holds only the constants that vary (kbproblem finds them from the problem); steps
    keep a dimension divisible by what the model needs, bounds narrow the range to where the
    reference was seen to run. Returns {} when nothing can vary.
    """
    dims: dict[str, Any] = {}
    for name, value in shape.items():
        step = (steps or {}).get(name, 1)
        default = (max(step, value // 4), value * 2)
        low, high = (bounds or {}).get(name, default)
        if low < high:
            dims[name] = _scaled_rule(value, low, high, step)
    return {"dims": dims, "relations": [], "fixed": []} if dims else {}


def _scaled_rule(value: int, low: int, high: int, step: int) -> dict[str, Any]:
    cpu_max = max(low, min(high, value, KERNELBENCH_CPU_CAP))
    cpu_max = max(low, cpu_max // step * step)
    return {"min": low, "max": high, "cpu_max": cpu_max, "multiple_of": step, "power_of_two": False}


# ---- drawing shapes ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Constraint:
    names: frozenset[str]
    holds: Callable[[Shape], bool]


@dataclass
class _Draw:
    """Everything one call of draw_unseen_shapes needs; seen grows as shapes are drawn."""

    names: list[str]
    domains: dict[str, Sequence[int]]
    smallest_seen: dict[str, int]
    constraints: list[_Constraint]
    seen: list[Shape]
    anchor: Shape

    def failing(self, shape: Shape) -> list[_Constraint]:
        return [c for c in self.constraints if not c.holds(shape)]

    def score(self, shape: Shape) -> tuple[int, bool]:
        """Lower is better; (0, False) is a valid shape not seen yet."""
        return len(self.failing(shape)), shape in self.seen

    def movable(self, shape: Shape) -> list[str]:
        """The dimensions worth moving: those of a failing constraint, else all."""
        failing = self.failing(shape)
        involved = set().union(*(c.names for c in failing)) if failing else set(self.names)
        return [n for n in self.names if n in involved and len(self.domains[n]) > 1]


def draw_unseen_shapes(
    spec: TaskSpec, *, seed: int, device: str, count: int = 5
) -> list[UnseenShape]:
    """Shapes the agent never saw, one per kind in KINDS order, then "random" ones.

    Every shape satisfies the task's rules and relations and differs from every visible and CPU
    shape; a kind that the rules leave no room for is skipped, so fewer than count may return.
    """
    rules = spec.generalization
    if not rules or not rules.get("dims"):
        return []
    draw = _draw_context(spec, rules, device)
    # The secrecy is in the seed; from it the draws must be reproducible, hence not `secrets`.
    rng = random.Random(seed)  # noqa: S311
    drawn: list[UnseenShape] = []
    for index in range(max(0, count)):
        kind = KINDS[index] if index < len(KINDS) else EXTRA_KIND
        shape = _draw_one(kind, draw, rng)
        if shape is not None:
            draw.seen.append(shape)
            drawn.append(UnseenShape(shape=shape, kind=kind))
    return drawn


def _draw_context(spec: TaskSpec, rules: Mapping[str, Any], device: str) -> _Draw:
    names = sorted(rules["dims"])
    device_seen = spec.shapes_for(device)
    bound = "cpu_max" if device == "cpu" else "max"
    domains = {name: _values(rule, int(rule[bound])) for name, rule in rules["dims"].items()}
    for name in rules.get("fixed", []):
        domains[name] = (spec.visible_shapes[0][name],)
    anchor = {name: _snap(domains[name], device_seen[0][name]) for name in names}
    constraints = [_relation_check(expression) for expression in rules.get("relations", [])]
    if device == "cpu":
        constraints += _bytes_cap(spec, names)
    constraints.append(_size_cap(spec, names, device_seen))
    return _Draw(
        names=names,
        domains=domains,
        smallest_seen={name: min(s[name] for s in device_seen) for name in names},
        constraints=constraints,
        seen=[dict(s) for s in (*spec.visible_shapes, *spec.cpu_shapes)],
        anchor=anchor,
    )


def _relation_check(expression: str) -> _Constraint:
    names = frozenset(relation_names(expression))
    return _Constraint(names, lambda shape: _relation_ok(expression, shape))


def _relation_ok(expression: str, shape: Mapping[str, int]) -> bool:
    try:
        return relation_holds(expression, shape)
    except FormulaError:
        return False


def _bytes_cap(spec: TaskSpec, names: list[str]) -> list[_Constraint]:
    reference = [_bytes(spec.bytes_moved, s) for s in spec.cpu_shapes or spec.visible_shapes]
    cap = CPU_BYTES_FACTOR * max(reference)
    if cap <= 0:  # KernelBench problems have no byte formula ("0").
        return []
    return [_Constraint(frozenset(names), lambda shape: _bytes(spec.bytes_moved, shape) <= cap)]


def size_estimate(spec: TaskSpec, shape: Mapping[str, int], seen: Sequence[Shape]) -> float:
    """How many times the visible shapes' size a shape is: by the task's byte formula where it
    has one, else (KernelBench problems) the product of each dimension's growth over its largest
    visible value, which no tensor whose size is a product of distinct dimensions outgrows."""
    return _size_scale(spec, seen)(shape)


def _size_scale(spec: TaskSpec, seen: Sequence[Shape]) -> Callable[[Mapping[str, int]], float]:
    """size_estimate against `seen`, with what depends only on `seen` worked out once: the
    draw asks it of tens of thousands of candidate shapes."""
    sizes = [_bytes(spec.bytes_moved, s) for s in seen]
    if sizes and all(0 < size < math.inf for size in sizes):
        largest_size = max(sizes)
        return lambda shape: _bytes(spec.bytes_moved, shape) / largest_size
    largest_values: dict[str, int] = {}
    for s in seen:
        for name, value in s.items():
            largest_values[name] = max(largest_values.get(name, 0), value)

    def growth(shape: Mapping[str, int]) -> float:
        product = 1.0
        for name, value in shape.items():
            largest = largest_values.get(name, 0)
            if largest > 0:
                product *= max(1.0, value / largest)
        return product

    return growth


def _size_cap(spec: TaskSpec, names: list[str], seen: Sequence[Shape]) -> _Constraint:
    scale = _size_scale(spec, seen)
    return _Constraint(frozenset(names), lambda shape: scale(shape) <= UNSEEN_SIZE_FACTOR)


def size_bound_holds(largest_elements: int, visible_largest_elements: int) -> bool:
    """Whether an unseen shape's largest tensor is within the sizes the problem poses."""
    return largest_elements <= UNSEEN_SIZE_FACTOR * max(1, visible_largest_elements)


def largest_elements(values: Sequence[Any]) -> int:
    """Elements of the largest tensor among values (others count as none)."""
    return max((int(v.numel()) for v in values if hasattr(v, "numel")), default=0)


def index_limited(
    shapes: Sequence[Mapping[str, Any]], failed: Sequence[int], largest: Mapping[int, int]
) -> list[int]:
    """Of the failed unseen shapes (by index), those whose failure is the 32-bit index limit:
    the shape has a tensor of INDEX_LIMIT_ELEMENTS or more, every visible shape's tensors are
    below it, and no unseen shape below it failed. `largest` holds each shape's largest tensor
    (inputs and the reference's outputs) as the judge saw it; a shape missing there counts as
    not known, and nothing is excused."""
    visible = [largest.get(i) for i, s in enumerate(shapes) if s["seen"]]
    if not visible or any(v is None or v >= INDEX_LIMIT_ELEMENTS for v in visible):
        return []
    past = [i for i in failed if largest.get(i, 0) >= INDEX_LIMIT_ELEMENTS]
    return past if len(past) == len(failed) else []


def grading_order(unseen: Sequence[UnseenShape], spec: TaskSpec, device: str) -> list[UnseenShape]:
    """Unseen shapes smallest first, so that a fault that spoils a process's device (an illegal
    address past the 32-bit index limit) comes after the shapes it would otherwise take down."""
    seen = spec.shapes_for(device)
    return sorted(unseen, key=lambda u: size_estimate(spec, u.shape, seen))


def _bytes(formula: str, shape: Mapping[str, int]) -> float:
    try:
        return formula_evaluate(formula, shape)
    except FormulaError:
        return math.inf


def _draw_one(kind: str, draw: _Draw, rng: random.Random) -> Shape | None:
    """Fresh draws first; then the nearest valid shape to a draw; then towards the anchor."""
    candidates = [_RECIPES[kind](draw, rng) for _ in range(_ATTEMPTS)]
    for candidate in candidates:
        if draw.score(candidate) == (0, False):
            return candidate
    for candidate in candidates[:_REPAIRS]:
        shape = _repair(candidate, draw)
        if shape is not None:
            return shape
    return _blend_towards_anchor(candidates[0], draw)


def _repair(shape: Shape, draw: _Draw) -> Shape | None:
    """Move one dimension at a time to its nearest value that breaks fewer constraints (or, with
    none broken, that gives a shape not seen yet), until the shape is valid and new."""
    score = draw.score(shape)
    for _ in range(2 * len(draw.names)):
        if score == (0, False):
            return shape
        better = _single_move(shape, score, draw) or _pair_move(shape, score, draw)
        if better is None:
            return None
        shape = better
        score = draw.score(shape)
    return shape if score == (0, False) else None


def _single_move(shape: Shape, score: tuple[int, bool], draw: _Draw) -> Shape | None:
    for name in draw.movable(shape):
        for value in _walk(draw.domains[name], shape[name], geometric=True):
            trial = {**shape, name: value}
            if draw.score(trial) < score:
                return trial
    return None


def _pair_move(shape: Shape, score: tuple[int, bool], draw: _Draw) -> Shape | None:
    # Relations such as "M + N == 4096" hold only if two dimensions move together.
    movable = draw.movable(shape)
    for first, second in itertools.combinations(movable, 2):
        for a in _walk(draw.domains[first], shape[first], geometric=False, steps=_PAIR_STEPS):
            for b in _walk(draw.domains[second], shape[second], geometric=False, steps=_PAIR_STEPS):
                trial = {**shape, first: a, second: b}
                if draw.score(trial) < score:
                    return trial
    return None


def _blend_towards_anchor(shape: Shape, draw: _Draw) -> Shape | None:
    # The anchor (a shape the task runs) satisfies every constraint: a monotone constraint such
    # as a byte cap holds somewhere on the way to it, and periodic ones hold next to it.
    varying = [name for name in draw.names if len(draw.domains[name]) > 1]
    for weight in _BLENDS:
        blended = dict(shape)
        for name in varying:
            mean = (1 - weight) * math.log(shape[name]) + weight * math.log(draw.anchor[name])
            blended[name] = _snap(draw.domains[name], math.exp(mean))
        repaired = _repair(blended, draw)
        if repaired is not None:
            return repaired
    return None


# ---- recipes, one per kind ---------------------------------------------------------------------


def _edge(draw: _Draw, rng: random.Random) -> Shape:
    shape: Shape = {}
    for name in draw.names:
        values = draw.domains[name]
        # The third power of two is already four times the minimum.
        shape[name] = _nth(values, rng.randrange(2 if isinstance(values, tuple) else 3))
    return shape


def _scale_up(draw: _Draw, rng: random.Random) -> Shape:
    return {name: _near_top(draw.domains[name], rng) for name in draw.names}


def _scale_down(draw: _Draw, rng: random.Random) -> Shape:
    shape: Shape = {}
    for name in draw.names:
        values = draw.domains[name]
        below = bisect.bisect_left(values, draw.smallest_seen[name])
        top = values[max(0, below - 1)]
        shape[name] = _snap(values, _log_uniform(rng, values[0], top))
    return shape


def _misaligned(draw: _Draw, rng: random.Random) -> Shape:
    shape: Shape = {}
    for name in draw.names:
        # Sizes like the visible ones, where a kernel tuned for them meets a ragged tail.
        values = draw.domains[name]
        low = _snap(values, draw.smallest_seen[name] / 4)
        target = _snap(values, _log_uniform(rng, low, values[-1]))
        shape[name] = _misaligned_near(values, target) or target
    return shape


def _asymmetric(draw: _Draw, rng: random.Random) -> Shape:
    varying = [name for name in draw.names if len(draw.domains[name]) > 1]
    rng.shuffle(varying)
    shape = _random(draw, rng)
    if len(varying) >= 2:
        large, small = draw.domains[varying[0]], draw.domains[varying[1]]
        shape[varying[0]] = _near_top(large, rng)
        shape[varying[1]] = _snap(small, _log_uniform(rng, small[0], min(small[-1], 8 * small[0])))
    return shape


def _random(draw: _Draw, rng: random.Random) -> Shape:
    return {
        name: _snap(values, _log_uniform(rng, values[0], values[-1]))
        for name, values in ((n, draw.domains[n]) for n in draw.names)
    }


_RECIPES: dict[str, Callable[[_Draw, random.Random], Shape]] = {
    "edge": _edge,
    "scale_up": _scale_up,
    "scale_down": _scale_down,
    "misaligned": _misaligned,
    "asymmetric": _asymmetric,
    EXTRA_KIND: _random,
}


# ---- the values of one dimension ---------------------------------------------------------------


def _values(rule: Mapping[str, Any], bound: int) -> Sequence[int]:
    """Valid values from min up to bound, ascending: a range, or a tuple of powers of two."""
    low, step = int(rule["min"]), int(rule["multiple_of"])
    if rule["power_of_two"]:
        powers = (1 << e for e in range(max(bound, 1).bit_length()))
        return tuple(p for p in powers if low <= p <= bound and p % step == 0)
    return range(-(-low // step) * step, bound + 1, step)


def _snap(values: Sequence[int], target: float) -> int:
    index = bisect.bisect_left(values, target)
    nearby = values[max(0, index - 1) : index + 1]
    return min(nearby, key=lambda v: abs(v - target))


def _nth(values: Sequence[int], index: int) -> int:
    return values[min(index, len(values) - 1)]


def _near_top(values: Sequence[int], rng: random.Random) -> int:
    top, span = values[-1], values[-1] - values[0]
    return _snap(values, rng.uniform(top - span / 16, top))


def _log_uniform(rng: random.Random, low: int, high: int) -> float:
    if high <= low:
        return float(low)
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _walk(
    values: Sequence[int], start: int, *, geometric: bool, steps: int = _LINEAR_STEPS
) -> Iterator[int]:
    """Values nearest to start first; geometric=True then leaps by powers of two."""
    index = bisect.bisect_left(values, start)
    offsets: Iterator[int] = iter(range(1, steps + 1))
    if geometric:
        leaps = (1 << e for e in range(steps.bit_length(), len(values).bit_length() + 1))
        offsets = (o for part in (offsets, leaps) for o in part)
    for offset in offsets:
        for position in (index + offset, index - offset):
            if 0 <= position < len(values):
                yield values[position]


def _misaligned_near(values: Sequence[int], target: int) -> int | None:
    """The nearest value that is not a multiple of 8 (a prime where the step allows), if any."""
    if not isinstance(values, range) or values.step % 8 == 0:
        return None
    nearby = [target, *_walk(values, target, geometric=False, steps=_MISALIGNED_STEPS)]
    if values.step == 1:
        prime = next((v for v in nearby if _is_prime(v)), None)
        if prime is not None:
            return prime
    return next((v for v in nearby if v % 8 != 0), None)


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _is_prime(value: int) -> bool:
    """Miller-Rabin with the first twelve primes as witnesses: exact below 3.3e24."""
    witnesses = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    if value < 2:
        return False
    if value in witnesses:
        return True
    if any(value % p == 0 for p in witnesses):
        return False
    odd, twos = value - 1, 0
    while odd % 2 == 0:
        odd, twos = odd // 2, twos + 1
    return all(_passes_witness(value, a, odd, twos) for a in witnesses)


def _passes_witness(value: int, witness: int, odd: int, twos: int) -> bool:
    x = pow(witness, odd, value)
    if x in (1, value - 1):
        return True
    for _ in range(twos - 1):
        x = pow(x, 2, value)
        if x == value - 1:
            return True
    return False
