"""Two evaluations lined up for the compare page: gates, per-shape rows and the solutions' diff.

Plain Python over the rows' attributes (no Django), so the alignment is tested on rows written
by hand.

Seen shapes are the task's visible shapes: both evaluations of one task ran the same ones, so
they pair on the exact shape. Unseen shapes are drawn per evaluation from a seed keyed by the
solution's hash (grader/generalization.py), so two different solutions draw different
ones. The grader draws them kind by kind in a fixed order (edge, scale-up, scale-down,
misaligned, asymmetric, then random) and stores them after the visible shapes in that order,
so the n-th unseen shape of a set of dimension names is the n-th kind on both sides; a drawn
shape the grader set aside (unseen_set_aside) shifts the later ones of its side by one kind.
Pairing by size would put one side's edge shape against the other's scale-down shape instead.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

Match = Literal["exact", "kind", "a_only", "b_only"]

# difflib's matcher grows quadratically with the lines in the worst case: past this many lines
# on either side the page links to the two solutions instead of diffing them.
MAX_DIFF_LINES = 5000
DIFF_CONTEXT_LINES = 3


class ShapeRow(Protocol):
    """What the alignment reads of a per-shape row (evaluator.models.EvaluationShape)."""

    index: int
    shape: Any
    seen: bool
    candidate_median_ms: float | None
    eager_ms: float | None


@dataclass(frozen=True)
class ShapePair:
    """One line of the per-shape table: A's row and B's row, either possibly missing."""

    match: Match
    a: ShapeRow | None
    b: ShapeRow | None
    # For unseen shapes: the position among the unseen shapes of the same dimension names, from 1.
    ordinal: int | None = None

    @property
    def seen(self) -> bool:
        row = self.a or self.b
        return bool(row and row.seen)

    @property
    def shape(self) -> Any:
        """A's shape, or B's where A has none."""
        row = self.a or self.b
        return row.shape if row else {}

    @property
    def same_shape(self) -> bool:
        """Both sides ran this very shape (always so for exact matches)."""
        return self.a is not None and self.b is not None and self.a.shape == self.b.shape

    @property
    def a_speedup(self) -> float | None:
        return shape_speedup(self.a)

    @property
    def b_speedup(self) -> float | None:
        return shape_speedup(self.b)


@dataclass(frozen=True)
class GatePair:
    name: str
    a: Mapping[str, Any] | None
    b: Mapping[str, Any] | None


@dataclass(frozen=True)
class DiffLine:
    kind: Literal["file", "hunk", "add", "del", "ctx"]
    text: str


@dataclass(frozen=True)
class SolutionDiff:
    lines: list[DiffLine]
    identical: bool
    too_long: bool = False
    added: int = 0
    removed: int = 0


def shape_speedup(row: ShapeRow | None) -> float | None:
    """Eager time over the candidate's median on this shape; None when either is missing."""
    if row is None or not row.candidate_median_ms or row.eager_ms is None:
        return None
    return row.eager_ms / row.candidate_median_ms


def shape_kind(shape: Any) -> tuple[str, ...]:
    """The kind of an unseen shape: its dimension names (drawn shapes list them sorted)."""
    return tuple(sorted(str(name) for name in shape)) if isinstance(shape, Mapping) else ()


def align_shapes(a_rows: Iterable[ShapeRow], b_rows: Iterable[ShapeRow]) -> list[ShapePair]:
    """Seen shapes paired on the exact shape, then unseen ones paired by kind and position.

    Rows keep A's order; B's rows without a partner follow those of their section.
    """
    a_sorted = sorted(a_rows, key=lambda row: row.index)
    b_sorted = sorted(b_rows, key=lambda row: row.index)
    seen = _pair(
        [r for r in a_sorted if r.seen], [r for r in b_sorted if r.seen], _exact_key, "exact"
    )
    unseen = _pair(
        [r for r in a_sorted if not r.seen],
        [r for r in b_sorted if not r.seen],
        lambda row: shape_kind(row.shape),
        "kind",
    )
    return seen + unseen


def _exact_key(row: ShapeRow) -> str:
    # JSON with sorted keys: {"M": 1, "N": 2} equals {"N": 2, "M": 1}, as the dicts do.
    return json.dumps(row.shape, sort_keys=True, default=str)


def _pair(
    a_rows: Sequence[ShapeRow],
    b_rows: Sequence[ShapeRow],
    key: Callable[[ShapeRow], Hashable],
    match: Literal["exact", "kind"],
) -> list[ShapePair]:
    # The n-th row of a key pairs with the other side's n-th row of that key: repeated seen
    # shapes pair in order, unseen shapes of one kind pair by their position in the draw.
    a_keys, b_keys = _numbered(a_rows, key), _numbered(b_rows, key)
    partners = dict(zip(b_keys, b_rows, strict=True))
    pairs = []
    for (name, ordinal), row in zip(a_keys, a_rows, strict=True):
        partner = partners.pop((name, ordinal), None)
        found: Match = match if partner is not None else "a_only"
        pairs.append(ShapePair(found, row, partner, _ordinal(match, ordinal)))
    for (name, ordinal), row in zip(b_keys, b_rows, strict=True):
        if (name, ordinal) in partners:
            pairs.append(ShapePair("b_only", None, row, _ordinal(match, ordinal)))
    return pairs


def _numbered(
    rows: Sequence[ShapeRow], key: Callable[[ShapeRow], Hashable]
) -> list[tuple[Hashable, int]]:
    counts: dict[Hashable, int] = {}
    numbered = []
    for row in rows:
        name = key(row)
        counts[name] = counts.get(name, 0) + 1
        numbered.append((name, counts[name]))
    return numbered


def _ordinal(match: str, ordinal: int) -> int | None:
    return ordinal if match == "kind" else None


def align_gates(a: Any, b: Any) -> list[GatePair]:
    """One row per gate name of either side, in A's order, then B's further gates."""
    a_gates, b_gates = _gates(a), _gates(b)
    names = list(a_gates) + [name for name in b_gates if name not in a_gates]
    return [GatePair(name, a_gates.get(name), b_gates.get(name)) for name in names]


def _gates(raw: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(name): gate for name, gate in raw.items() if isinstance(gate, Mapping)}


def unseen_set_aside(gates: Any) -> int:
    """How many drawn unseen shapes the grader set aside (its reference could not run them).

    Each one shifts the later unseen shapes of that evaluation by one kind.
    """
    detail = _gates(gates).get("generalization", {}).get("detail")
    value = detail.get("unseen_rejected") if isinstance(detail, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def solution_diff(a: str, b: str, *, a_label: str, b_label: str) -> SolutionDiff:
    """A unified diff from A's solution to B's, line by line with each line's kind."""
    if a == b:
        return SolutionDiff(lines=[], identical=True)
    a_lines, b_lines = a.splitlines(), b.splitlines()
    if max(len(a_lines), len(b_lines)) > MAX_DIFF_LINES:
        return SolutionDiff(lines=[], identical=False, too_long=True)
    raw = difflib.unified_diff(
        a_lines, b_lines, a_label, b_label, n=DIFF_CONTEXT_LINES, lineterm=""
    )
    lines = [DiffLine(_diff_kind(position, text), text) for position, text in enumerate(raw)]
    return SolutionDiff(
        lines=lines,
        identical=False,
        added=sum(1 for line in lines if line.kind == "add"),
        removed=sum(1 for line in lines if line.kind == "del"),
    )


def _diff_kind(position: int, text: str) -> Literal["file", "hunk", "add", "del", "ctx"]:
    # The two file headers come first; after them a removed "-- x" line also starts with "---".
    if position < 2:
        return "file"
    if text.startswith("@@"):
        return "hunk"
    if text.startswith("+"):
        return "add"
    return "del" if text.startswith("-") else "ctx"


class Submitted(Protocol):
    pk: Any
    created_at: Any


S = TypeVar("S", bound=Submitted)


def latest_submission(submissions: Iterable[S]) -> S | None:
    """The most recent submission; the higher id breaks a tie in creation time."""
    return max(submissions, key=lambda s: (s.created_at, s.pk), default=None)
