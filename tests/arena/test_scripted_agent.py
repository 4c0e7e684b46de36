"""The scripted agent: real tool calls in a workspace, logged as Claude Code stream-json."""

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.agents import (
    SCRIPTED_PROGRAM,
    AgentError,
    agent_run,
    scripted_command,
    scripted_run,
)
from arena.workspace import workspace_build, workspace_changed_protected, workspace_collect
from grader.taskspec import DEFAULT_CATALOG
from transcript_formats import parse_bytes

CORE = DEFAULT_CATALOG / "core"


@pytest.fixture(scope="module")
def shared_runs(tmp_path_factory):
    """Real runs that several tests only read, each made once per module."""
    made: dict = {}

    def get(slug: str, strategy: str):
        if (slug, strategy) not in made:
            made[slug, strategy] = run_agent(tmp_path_factory.mktemp("run"), slug, strategy)
        return made[slug, strategy]

    return get


def run_agent(tmp_path: Path, slug: str, strategy: str):
    workspace = workspace_build(task_folder=CORE / slug, root=tmp_path / "ws")
    outcome = scripted_run(
        workspace=workspace.root, strategy=strategy, log_path=tmp_path / "log.jsonl"
    )
    assert outcome.returncode == 0, outcome.stderr
    assert not outcome.timed_out
    records = [json.loads(line) for line in outcome.log_path.read_text().splitlines()]
    return workspace, records, outcome


def tool_pairs(records: list[dict]) -> list[tuple[dict, dict]]:
    """(tool_use block, its tool_result block), checking each result follows its call."""
    pairs, pending = [], {}
    for record in records:
        if record["type"] not in ("assistant", "user"):
            continue
        for block in record["message"]["content"]:
            if block["type"] == "tool_use":
                pending[block["id"]] = block
            elif block["type"] == "tool_result":
                pairs.append((pending.pop(block["tool_use_id"]), block))
    assert pending == {}, "every tool call has its result"
    return pairs


def checks(pairs):
    return [result for call, result in pairs if call["input"].get("command") == "./check"]


def numbered(path: Path) -> str:
    lines = path.read_text().splitlines()
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, 1))


def test_weak_strategy_fails_the_check_then_fixes_the_solution(tmp_path):
    workspace, records, _ = run_agent(tmp_path, "tt-vector-add", "weak")
    init, result = records[0], records[-1]
    assert (init["type"], init["subtype"], init["model"]) == ("system", "init", "scripted")
    assert init["cwd"] == str(workspace.root)
    pairs = tool_pairs(records)
    assert [call["name"] for call, _ in pairs] == [
        "Read", "Bash", "Read", "Read", "Write", "Bash", "Edit", "Bash"
    ]  # fmt: skip
    first, second = checks(pairs)
    assert first["is_error"] is True
    assert first["content"].startswith("Exit code 1\nstatus: failed   reward: -2   device: cpu")
    assert "[FAIL] correctness     incorrect on shape {'N': 100}" in first["content"]
    assert second["is_error"] is False
    assert second["content"].startswith("status: passed")
    # The fix answered the verdict: the Edit call quotes the failing line it read.
    edit_turn = next(
        r for r in records if r["type"] == "assistant" and "The check fails" in json.dumps(r)
    )
    assert "[FAIL] correctness" in edit_turn["message"]["content"][0]["text"]
    solution = (workspace.root / "solution.py").read_text()
    assert solution == (workspace.root / "starter" / "solution.py").read_text()
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False)
    assert result["total_cost_usd"] == 0
    assert result["num_turns"] == 8
    assert result["duration_ms"] > 0
    assert workspace_changed_protected(workspace=workspace) == []


def test_tool_results_are_the_real_outputs(tmp_path):
    workspace, records, _ = run_agent(tmp_path, "tt-row-max", "starter")
    pairs = tool_pairs(records)
    reads = {
        call["input"]["file_path"]: result["content"]
        for call, result in pairs
        if call["name"] == "Read"
    }
    for name in ("PROMPT.md", "reference.py", "starter/solution.py"):
        assert reads[str(workspace.root / name)] == numbered(workspace.root / name)
    listing = pairs[1][1]["content"].splitlines()
    assert listing == ["./PROMPT.md", "./check", "./reference.py", "./starter/solution.py"]
    write_call = pairs[4][0]
    assert write_call["input"]["content"] == (workspace.root / "solution.py").read_text()
    # Running the check again prints what the agent was shown.
    again = subprocess.run(
        ["./check"], cwd=workspace.root, capture_output=True, text=True, timeout=600
    )
    assert checks(pairs)[-1]["content"] == again.stdout.rstrip()


def test_the_log_parses_as_stream_json_with_one_call_per_tool_use(shared_runs):
    _, records, outcome = shared_runs("t2c-row-sum", "reference")
    transcript = parse_bytes(outcome.log_path.read_bytes(), "log.jsonl")
    assert transcript.format == "claude-code-stream-json"
    assert transcript.model == "scripted"
    assert transcript.cost_usd == 0
    events = transcript.events()
    assert sum(e.kind == "tool_call" for e in events) == len(tool_pairs(records)) == 5
    assert sum(e.kind == "tool_result" for e in events) == 5
    assert sum(e.kind == "file_change" for e in events) == 1
    usage = transcript.usage()
    assert (usage.input_tokens, usage.output_tokens) == (0, 0)  # no model was called


def test_reference_strategy_wraps_the_reference_and_passes_the_check(shared_runs):
    workspace, records, _ = shared_runs("t2c-row-sum", "reference")
    solution = (workspace.root / "solution.py").read_text()
    assert (workspace.root / "reference.py").read_text().rstrip() in solution
    assert "class ModelNew(Model):" in solution
    assert checks(tool_pairs(records))[-1]["is_error"] is False
    assert records[-1]["result"].startswith("check passes")


def test_starter_strategy_without_a_starter_says_so_and_uses_the_reference(tmp_path):
    workspace, records, _ = run_agent(tmp_path, "t2c-row-sum", "starter")
    texts = [
        block["text"]
        for r in records
        if r["type"] == "assistant"
        for block in r["message"]["content"]
        if block["type"] == "text"
    ]
    assert "There is no starter kernel here, so I'll start from the reference instead." in texts
    assert "class ModelNew(Model):" in (workspace.root / "solution.py").read_text()


def test_broken_strategy_leaves_a_solution_that_does_not_compile_and_gives_up(
    shared_runs, tmp_path
):
    workspace, records, _ = shared_runs("tt-vector-add", "broken")
    (only_check,) = checks(tool_pairs(records))
    assert only_check["is_error"] is True
    assert "[FAIL] compile         did not compile" in only_check["content"]
    assert records[-1]["result"].startswith("Giving up: check reports [FAIL] compile")
    collected = workspace_collect(workspace=workspace, dest=tmp_path / "out")
    with pytest.raises(SyntaxError):
        compile(collected["solution.py"], "solution.py", "exec")


def test_the_same_task_and_strategy_give_the_same_solution_and_calls(shared_runs, tmp_path):
    first = shared_runs("tt-vector-add", "broken")
    second = run_agent(tmp_path, "tt-vector-add", "broken")
    assert first[1][0]["session_id"] == second[1][0]["session_id"]
    calls = [[c["name"] for c, _ in tool_pairs(r)] for r in (first[1], second[1])]
    assert calls[0] == calls[1]
    solutions = [(w.root / "solution.py").read_text() for w in (first[0], second[0])]
    assert solutions[0] == solutions[1]


def test_an_unknown_strategy_is_refused_by_name():
    with pytest.raises(AgentError, match="unknown scripted strategy 'clever'"):
        scripted_command(strategy="clever")


def test_outside_a_workspace_the_program_says_so(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPTED_PROGRAM), "--strategy", "starter"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "PROMPT.md: file not found; run me inside a workspace" in done.stderr


def test_the_agent_process_gets_no_host_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_SECRET_KEY", "host-secret")
    monkeypatch.setenv("ARENA_HIDDEN_SEED", "grader-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host")
    outcome = agent_run(command=["env"], workspace=tmp_path, log_path=tmp_path / "env.log")
    env = outcome.log_path.read_text()
    for secret in ("host-secret", "grader-secret", "sk-ant-host", "DATABASE_URL"):
        assert secret not in env
    assert "HOME=" in env


def test_an_agent_past_its_time_is_killed_with_its_children(tmp_path):
    # A duration of this test's own, so that no other sleep on the machine is taken for ours.
    seconds = f"300.{uuid.uuid4().int % 10**9:09d}"
    command = ["sh", "-c", f"sleep {seconds} & sleep {seconds}"]
    outcome = agent_run(command=command, workspace=tmp_path, log_path=tmp_path / "log", timeout_s=1)
    assert outcome.timed_out is True
    assert outcome.duration_s < 30
    left = subprocess.run(["pgrep", "-f", f"sleep {seconds}"], capture_output=True, text=True)
    assert left.stdout.strip() == ""
