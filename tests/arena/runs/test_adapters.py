"""Agent adapters: command lines, budgets, logs, and how each CLI's ending is read."""

import json
import os
import threading
from pathlib import Path

import pytest

from arena.agents.base import AdapterError, Budget, Progress
from arena.agents.codex import CodexAdapter
from arena.agents.registry import ADAPTERS, adapter_for

HOME = Path("/box/home")


def stream(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def judge(adapter, tmp_path, log: str, *, stderr: str = "", returncode: int = 0):
    path = tmp_path / "agent.log"
    path.write_text(log)
    return adapter.judge(log_path=path, stderr=stderr, returncode=returncode)


def test_every_harness_is_registered():
    assert sorted(ADAPTERS) == ["claude-code", "codex", "command", "cursor", "gemini", "scripted"]


def test_claude_code_runs_headless_in_stream_json_with_permissions_bypassed():
    adapter = adapter_for(harness="claude-code", model="claude-opus-4-1", effort="high")
    argv = adapter.command(
        prompt="Do the task", budget=Budget(max_turns=30, max_cost_usd=2.5), home=HOME
    )
    assert argv == [
        "claude",
        "-p",
        "Do the task",
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
        "--model",
        "claude-opus-4-1",
        "--max-turns",
        "30",
        "--max-budget-usd",
        "2.5",
    ]
    env = adapter.env(home=HOME, environ={"ANTHROPIC_API_KEY": "sk-x", "AWS_SECRET": "no"})
    assert env["ANTHROPIC_API_KEY"] == "sk-x" and "AWS_SECRET" not in env
    assert env["MAX_THINKING_TOKENS"] == "31999"


def test_codex_runs_exec_json_with_its_own_home_and_effort():
    adapter = adapter_for(harness="codex", model="gpt-5-codex", effort="high")
    argv = adapter.command(prompt="Do it", budget=Budget(), home=HOME)
    assert argv[:3] == ["codex", "exec", "--json"]
    assert argv[-1] == "Do it"
    assert argv[argv.index("-c") : argv.index("-c") + 2] == ["-c", "model_reasoning_effort=high"]
    assert adapter.env(home=HOME, environ={})["CODEX_HOME"] == "/box/home/.codex"


def test_cursor_and_gemini_stream_json_command_lines():
    cursor = adapter_for(harness="cursor", model="sonnet-4").command(
        prompt="P", budget=Budget(), home=HOME
    )
    assert cursor == [
        "cursor-agent",
        "--print",
        "--output-format",
        "stream-json",
        "--force",
        "--model",
        "sonnet-4",
        "P",
    ]
    gemini = adapter_for(harness="gemini").command(prompt="P", budget=Budget(), home=HOME)
    assert gemini == ["gemini", "--prompt", "P", "--output-format", "stream-json", "--yolo"]


def test_codex_transcript_is_the_rollout_file_of_its_session(tmp_path):
    session = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    log = tmp_path / "agent.log"
    log.write_text(
        stream({"type": "thread.started", "thread_id": session}, {"type": "turn.started"})
    )
    day = tmp_path / "home" / ".codex" / "sessions" / "2026" / "11" / "21"
    day.mkdir(parents=True)
    (day / "rollout-2026-11-21T05-00-00-0199a1b2-0000-0000-0000-000000000000.jsonl").write_text("")
    rollout = day / f"rollout-2026-11-21T05-01-00-{session}.jsonl"
    rollout.write_text("{}\n")
    adapter = CodexAdapter()
    found = adapter.transcript(log_path=log, home=tmp_path / "home", workspace=tmp_path)
    assert found == rollout
    # Without a session id (an old or failed run), the exec --json log itself.
    log.write_text(stream({"type": "error", "message": "boom"}))
    assert adapter.transcript(log_path=log, home=tmp_path / "home", workspace=tmp_path) == log


def test_claude_result_records_say_finished_out_of_turns_or_provider_error(tmp_path):
    adapter = adapter_for(harness="claude-code")
    init = {"type": "system", "subtype": "init"}
    finished = stream(init, {"type": "result", "subtype": "success", "is_error": False})
    assert judge(adapter, tmp_path, finished).finished
    out_of_turns = stream(init, {"type": "result", "subtype": "error_max_turns", "is_error": True})
    assert judge(adapter, tmp_path, out_of_turns, returncode=1).reason == "budget_exhausted"
    api_error = stream(
        init,
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "result": 'API Error: 529 {"type":"overloaded_error"}',
        },
    )
    verdict = judge(adapter, tmp_path, api_error, returncode=1)
    assert verdict.reason == "provider_error"
    assert "API Error: 529" in verdict.detail


def test_a_rate_limit_mentioned_by_a_tool_is_not_a_provider_error(tmp_path):
    adapter = adapter_for(harness="claude-code")
    log = stream(
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "content": "def rate_limit(): ..."}]},
        },
        {"type": "result", "subtype": "success", "is_error": False, "result": "done"},
    )
    assert judge(adapter, tmp_path, log).finished


def test_a_log_without_the_result_record_is_an_agent_error(tmp_path):
    adapter = adapter_for(harness="cursor")
    verdict = judge(adapter, tmp_path, stream({"type": "assistant"}))
    assert verdict.reason == "agent_error"
    assert verdict.detail == "cursor-agent stopped without its completion marker"


def test_codex_turn_failed_is_a_provider_error(tmp_path):
    adapter = adapter_for(harness="codex")
    log = stream(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.failed", "error": {"message": "stream disconnected: 429 Too Many Requests"}},
    )
    verdict = judge(adapter, tmp_path, log, returncode=1)
    assert verdict.reason == "provider_error"
    finished = stream({"type": "thread.started", "thread_id": "t"}, {"type": "turn.completed"})
    assert judge(adapter, tmp_path, finished).finished


def test_command_templates_fill_words_without_a_shell():
    adapter = adapter_for(
        harness="command",
        model="m1",
        config={"template": "mycli --model {model} --turns {max_turns} --prompt {prompt}"},
    )
    argv = adapter.command(prompt="a; rm -rf / $(x)", budget=Budget(max_turns=7), home=HOME)
    assert argv == ["mycli", "--model", "m1", "--turns", "7", "--prompt", "a; rm -rf / $(x)"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "option 'template' (the command line) is missing"),
        ({"template": "cli {secret}"}, "unknown placeholder {secret}"),
        ({"template": "cli 'unclosed"}, "template: No closing quotation"),
        ({"template": "cli", "provider_error_marker": "("}, "provider_error_marker: not a regular"),
        ({"template": "cli", "colour": "blue"}, "unknown option 'colour'"),
    ],
)
def test_command_agents_with_bad_options_are_refused(config, message):
    with pytest.raises(AdapterError, match="command agent: ") as raised:
        adapter_for(harness="command", config=config)
    assert message in str(raised.value)


def test_unknown_harnesses_and_strategies_are_named():
    with pytest.raises(AdapterError, match="unknown agent harness 'aider'; choose one of"):
        adapter_for(harness="aider")
    with pytest.raises(AdapterError, match="strategy 'clever'"):
        adapter_for(harness="scripted", config={"strategy": "clever"})


def test_a_missing_cli_is_named():
    adapter = adapter_for(harness="command", config={"template": "no-such-cli-anywhere run"})
    with pytest.raises(AdapterError, match=r"^no-such-cli-anywhere: not installed"):
        adapter.locate()
    assert adapter.version() == ""


def test_the_cli_version_comes_from_dash_dash_version():
    adapter = adapter_for(harness="command", config={"template": "python3 agent.py"})
    assert adapter.version().startswith("Python 3.")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"max_turns": 0}, "budget.max_turns: must be positive, not 0"),
        ({"max_turns": 2.5}, "budget.max_turns: a whole number is needed, not 2.5"),
        ({"max_tokens": "many"}, "budget.max_tokens: a number is needed, not 'many'"),
        ({"wall_clock_s": True}, "budget.wall_clock_s: a number is needed, not True"),
        ({"minutes": 3}, "budget.minutes: unknown field"),
    ],
)
def test_budgets_name_the_bad_field(data, message):
    with pytest.raises(ValueError) as raised:
        Budget.from_dict(data)
    assert str(raised.value) == message


def test_budgets_default_to_45_minutes_and_merge_overrides():
    assert Budget.from_dict(None).wall_clock_s == 45 * 60
    merged = Budget.from_dict({"max_turns": 10}).merged({"wall_clock_s": 60})
    assert merged.to_dict() == {
        "wall_clock_s": 60.0,
        "max_turns": 10,
        "max_tokens": None,
        "max_cost_usd": None,
    }


def test_the_budget_watcher_reads_no_fifo_or_link_that_the_agent_put_for_a_log(tmp_path):
    home, log = tmp_path / "home", tmp_path / "agent.log"
    log.write_text(stream({"type": "system", "session_id": "s1"}))
    session = home / ".claude" / "projects" / "-box-workspace" / "s1.jsonl"
    session.parent.mkdir(parents=True)
    os.mkfifo(session)  # opened plainly, it would block the watcher until a writer came
    adapter = adapter_for(harness="claude-code")
    spent: list[Progress] = []
    watcher = threading.Thread(
        target=lambda: spent.append(adapter.progress(log_path=log, home=home))
    )
    watcher.start()
    watcher.join(timeout=10)
    assert spent == [Progress()]
    session.unlink()
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(
        stream({"type": "assistant", "message": {"id": "c", "usage": {"input_tokens": 9}}})
    )
    session.symlink_to(elsewhere)
    assert adapter.progress(log_path=log, home=home) == Progress()


def test_the_budget_watcher_counts_each_model_call_once_in_every_cli_s_logs(tmp_path):
    home, log = tmp_path / "home", tmp_path / "agent.log"
    # Claude Code: one stream line per content block, each repeating its call's usage.
    usage = {"input_tokens": 100, "output_tokens": 5, "cache_read_input_tokens": 10}
    log.write_text(
        stream(
            *({"type": "assistant", "message": {"id": i, "usage": usage}} for i in "aab"),
            {"type": "user"},
        )
    )
    assert adapter_for(harness="claude-code").progress(log_path=log, home=home) == Progress(2, 230)
    # ... and its session log, which has the usage a call's stream ended with (stdout has the
    # usage it began with: one output token).
    log.write_text(
        stream(
            {"type": "system", "session_id": "s1"},
            {"type": "assistant", "message": {"id": "c", "usage": {"input_tokens": 100}}},
        )
    )
    project = home / ".claude" / "projects" / "-box-workspace"
    project.mkdir(parents=True)
    (project / "s1.jsonl").write_text(
        stream({"type": "assistant", "message": {"id": "c", "usage": {"output_tokens": 120}}})
    )
    assert adapter_for(harness="claude-code").progress(log_path=log, home=home) == Progress(1, 120)
    # Codex: the rollout's token_count events, cumulative; the first of a session has no info.
    log.write_text(stream({"type": "thread.started", "thread_id": "t1"}))
    day = home / ".codex" / "sessions" / "2026" / "11" / "27"
    day.mkdir(parents=True)
    counts = [
        None,
        {"total_token_usage": {"total_tokens": 120}},
        {"total_token_usage": {"total_tokens": 300}},
    ]
    (day / "rollout-2026-11-27T10-00-00-t1.jsonl").write_text(
        stream(
            *(
                {"type": "event_msg", "payload": {"type": "token_count", "info": info}}
                for info in counts
            )
        )
    )
    assert adapter_for(harness="codex").progress(log_path=log, home=home) == Progress(2, 300)
    # Gemini CLI: a call per tool_use on stdout; tokens from the session, a message rewritten
    # as it grows counted once.
    log.write_text(stream({"type": "tool_use"}, {"type": "tool_result"}, {"type": "tool_use"}))
    chats = home / ".gemini" / "tmp" / "ws" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-1.jsonl").write_text(
        stream(
            *(
                {"type": "gemini", "id": i, "tokens": {"total": t}}
                for i, t in (("m1", 50), ("m1", 60), ("m2", 70))
            )
        )
    )
    assert adapter_for(harness="gemini").progress(log_path=log, home=home) == Progress(2, 130)
    assert Progress(2, 130).over(Budget(max_turns=1), enforced=frozenset()) == (
        "the agent was stopped at 2 against a budget of max_turns = 1"
    )
    assert not Progress(2, 130).over(Budget(max_turns=1), enforced=frozenset({"max_turns"}))
