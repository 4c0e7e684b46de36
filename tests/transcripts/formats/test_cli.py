"""`python -m transcripts inspect` and `render`, run as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .transcript_readers import FIXTURES

REPO = Path(__file__).resolve().parents[3]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "transcripts", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_inspect_json_prints_exactly_the_documented_counts():
    result = _run("inspect", str(FIXTURES / "claude_code_2_1"), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "format": "claude-code-jsonl",
        "threads": 2,
        "turns": 10,
        "tool_calls": 4,
        "file_changes": 2,
        "subagents": 1,
        "malformed_lines": 1,
        # billed: the abandoned branch's call (1 in, 7 out, sonnet $3/$15 per million) included
        "usage": {
            "input_tokens": 26,
            "output_tokens": 120,
            "cache_read_tokens": 310,
            "cache_write_tokens": 110,
        },
        "cost_usd": 0.00223,
        "cost_computed": True,
    }


def test_inspect_json_reports_a_cost_read_from_the_log_as_not_computed():
    result = _run("inspect", str(FIXTURES / "claude_stream.jsonl"), "--json")
    counts = json.loads(result.stdout)
    assert counts["cost_usd"] == 0.0421 and counts["cost_computed"] is False


def test_inspect_without_json_is_a_readable_summary_with_malformed_lines():
    result = _run("inspect", str(FIXTURES / "codex_rollout"))
    assert result.returncode == 0, result.stderr
    assert "codex-rollout (0.58.0)" in result.stdout
    assert "1 subagents" in result.stdout
    assert "0199-main.jsonl:20" in result.stdout


def test_inspect_of_an_unknown_file_fails_with_a_message_naming_it(tmp_path):
    path = tmp_path / "mystery.log"
    path.write_text("hello\n")
    result = _run("inspect", str(path), "--json")
    assert result.returncode == 2
    assert "mystery.log" in result.stderr and "not a log in any known format" in result.stderr


def test_render_writes_one_html_file(tmp_path):
    out = tmp_path / "run.html"
    result = _run("render", str(FIXTURES / "codex_rollout"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    html = out.read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "ops.py" in html
