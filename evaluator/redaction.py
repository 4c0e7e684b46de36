"""A grading as someone other than its owner sees it.

The verdict, gates, shapes and flags of a public run's grading are public. What the solution
itself wrote is not: its stdout and stderr, the tracebacks of its exceptions and the compiler's
output quote its source and whatever it chose to print (the grading host's files, the unseen
shapes it was called with). Those are for the grading's owner and staff alone. The grader's
result (docs/result-schema.md) holds them in known places, all handled here:

- `log`: the tail of the candidate's stdout and stderr;
- a gate's `detail.error` and `detail.log`: tracebacks, compiler output, the child's last words;
- a shape's reason "<stage> error: <last line of the exception>", which the correctness and
  generalization gates quote after the shape that failed;
- the paths and hosts a `file_access` or `network` flag names: the solution chose them;
- the row's `error`: why the grader could not run, which may quote what it was running.

Readers never take these from the rows directly: the read side passes each grading through
`result_seen`, `error_seen` and `shapes_seen` with whether the reader owns it.
"""

import copy
import re
from collections.abc import Iterable
from typing import Any

from evaluator.models import EvaluationShape

WITHHELD = "shown to its owner only"
SOLUTION_DETAIL_KEYS = ("error", "log")
# Flags whose message ends in what the solution named (verdicts.py): kept up to the colon.
FLAGS_NAMING_WHAT_IT_DID = ("file_access", "network")
# The stages of the candidate's child (engine/child.py, _StageError): a shape's reason is
# "<stage> error: <the exception's last line>" (engine/verdicts.py, _shape_failure).
_STAGE_ERROR = re.compile(
    r"\b(compile|construct|runtime|judge|device_busy|scratch_full) error: .*\Z", re.DOTALL
)


def reason_for_others(reason: str) -> str:
    """A gate's or a shape's reason without the exception message it quotes."""
    return _STAGE_ERROR.sub(lambda m: f"{m.group(1)} error (its message is {WITHHELD})", reason)


def error_for_others(error: str) -> str:
    """The grader's own failure, named without what it quoted."""
    if not error:
        return ""
    return f"{error.split(':', 1)[0]} (the details are {WITHHELD})"


def result_for_others(result: dict[str, Any]) -> dict[str, Any]:
    """A copy of the grader's result without the solution's output and error messages."""
    if not isinstance(result, dict):
        return {}
    shown = {k: v for k, v in result.items() if k != "log"}
    if isinstance(result.get("gates"), dict):
        shown["gates"] = {name: _gate(gate) for name, gate in result["gates"].items()}
    if isinstance(result.get("per_shape"), list):
        shown["per_shape"] = [_shape_row(row) for row in result["per_shape"]]
    if isinstance(result.get("flags"), list):
        shown["flags"] = [_flag(flag) for flag in result["flags"]]
    return shown


def result_seen(result: dict[str, Any], *, disclosed: bool) -> dict[str, Any]:
    return result if disclosed else result_for_others(result)


def error_seen(error: str, *, disclosed: bool) -> str:
    return error if disclosed else error_for_others(error)


def shapes_seen(shapes: Iterable[EvaluationShape], *, disclosed: bool) -> list[EvaluationShape]:
    """The per-shape rows; for others, unsaved copies whose reasons quote no exception."""
    if disclosed:
        return list(shapes)
    seen = []
    for row in shapes:
        shown = copy.copy(row)
        shown.reason = reason_for_others(row.reason)
        seen.append(shown)
    return seen


def _gate(gate: Any) -> Any:
    if not isinstance(gate, dict):
        return gate
    shown = dict(gate, reason=reason_for_others(str(gate.get("reason") or "")))
    if isinstance(gate.get("detail"), dict):
        detail = gate["detail"]
        shown["detail"] = {k: v for k, v in detail.items() if k not in SOLUTION_DETAIL_KEYS}
    return shown


def _shape_row(row: Any) -> Any:
    if not isinstance(row, dict) or not row.get("reason"):
        return row
    return dict(row, reason=reason_for_others(str(row["reason"])))


def _flag(flag: Any) -> Any:
    if not isinstance(flag, dict) or flag.get("code") not in FLAGS_NAMING_WHAT_IT_DID:
        return flag
    said = str(flag.get("message") or "").split(":", 1)[0]
    return dict(flag, message=f"{said} (what it named is {WITHHELD})")
