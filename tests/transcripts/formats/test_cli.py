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


KERNEL = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass  # draft\n"


def _claude_log(tmp_path: Path, *, copy: bool) -> Path:
    """A Claude Code session that copies the starter (or writes solution.py) and edits it."""
    base = {"sessionId": "s", "cwd": "/w", "version": "2.0.1", "isSidechain": False}
    first = (
        {"name": "Bash", "input": {"command": "cp starter/solution.py solution.py"}}
        if copy
        else {"name": "Write", "input": {"file_path": "/w/solution.py", "content": KERNEL}}
    )
    edit = {"file_path": "/w/solution.py", "old_string": "# draft", "new_string": "# tuned"}
    calls = [first, {"name": "Edit", "input": edit}]
    records = [
        {
            "type": "user",
            "uuid": "u0",
            "parentUuid": None,
            "message": {"role": "user", "content": "Tune the kernel"},
        }
    ]
    for n, call in enumerate(calls, start=1):
        use = {"type": "tool_use", "id": f"t{n}", **call}
        records.append(
            {
                "type": "assistant",
                "uuid": f"a{n}",
                "parentUuid": f"u{n - 1}",
                "message": {"id": f"m{n}", "role": "assistant", "model": "m", "content": [use]},
            }
        )
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}
        records.append(
            {
                "type": "user",
                "uuid": f"u{n}",
                "parentUuid": f"a{n}",
                "message": {"role": "user", "content": [result]},
            }
        )
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({**base, **r}) + "\n" for r in records))
    return path


def test_kernel_prints_the_last_solution_the_log_wrote_and_where(tmp_path):
    result = _run("kernel", str(_claude_log(tmp_path, copy=False)))
    assert result.returncode == 0, result.stderr
    assert result.stdout == KERNEL.replace("# draft", "# tuned")
    assert result.stderr.strip() == "/w/solution.py, written at turn 2 by Edit"
    inspected = _run("inspect", str(tmp_path / "s.jsonl"))
    assert "kernel      /w/solution.py, written at turn 2 by Edit" in inspected.stdout


def test_kernel_replays_a_copy_of_the_starter_from_the_workspace(tmp_path):
    log = _claude_log(tmp_path, copy=True)
    alone = _run("kernel", str(log))
    assert alone.returncode == 1 and "whose content the log does not hold" in alone.stderr
    workspace = tmp_path / "task"
    (workspace / "starter").mkdir(parents=True)
    (workspace / "starter" / "solution.py").write_text(KERNEL)
    out = tmp_path / "solution.py"
    result = _run("kernel", str(log), "--workspace", str(workspace), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text() == KERNEL.replace("# draft", "# tuned")


def test_kernel_of_a_file_the_log_never_wrote_says_so(tmp_path):
    result = _run("kernel", str(_claude_log(tmp_path, copy=False)), "--file", "kernel.cu")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: kernel.cu: the log never names this file"
