"""A grading's gates, read once for every page that shows them: the run page's table
(templates/leaderboard/_gates.html) and the grader's log beside a transcript (text)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GateRow:
    name: str
    passed: bool | None  # None: the gate did not run
    reason: str = ""
    error: str = ""
    log: str = ""
    bare: bool = False  # stored as a bare value, not a gate's record: the value is the reason

    @property
    def outcome(self) -> str:
        return {True: "pass", False: "fail"}.get(self.passed, "skip")


def gate_rows(gates: Mapping[str, Any] | None) -> list[GateRow]:
    """The gates in the grader's order; a gate stored as a bare value reads as its reason."""
    rows = []
    for name, gate in (gates or {}).items():
        if not isinstance(gate, Mapping):
            rows.append(GateRow(name=str(name), passed=None, reason=str(gate), bare=True))
            continue
        detail = gate.get("detail")
        detail = detail if isinstance(detail, Mapping) else {}
        rows.append(
            GateRow(
                name=str(name),
                passed=gate.get("passed") if isinstance(gate.get("passed"), bool) else None,
                reason=str(gate.get("reason") or ""),
                error=str(detail.get("error") or ""),
                log=str(detail.get("log") or ""),
            )
        )
    return rows


def gate_lines(row: GateRow) -> list[str]:
    """One gate as the grader's log prints it: its line, then its error output and log."""
    if row.bare:
        return [f"{row.name}: {row.reason}"]
    label = {"pass": "PASS", "fail": "FAIL", "skip": "not run"}[row.outcome]
    lines = [f"{row.name}: {label} {row.reason}".rstrip()]
    for key, text in (("error", row.error), ("log", row.log)):
        if text:
            lines += [f"  {key}:", text]
    return lines
