"""The final kernel an agent wrote, replayed from its log: small logs of each format, written
here, parsed by the real parsers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from transcript_formats import Transcript, parse_bytes
from transcript_formats.written_files import (
    FileNotWritten,
    file_from_transcript,
    log_names_task,
    solution_from_transcript,
    written_files,
)

KERNEL = (
    "import torch\n\nBLOCK = 128\n\n\n"
    "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
)
TUNED = KERNEL.replace("BLOCK = 128", "BLOCK = 256")
FINAL = TUNED.replace("return x", "return x * 2").replace("import torch", "import torch  # v2")
HUNK_TUNE = "@@ -3,1 +3,1 @@\n-BLOCK = 128\n+BLOCK = 256\n"
PATCH_TUNE = (
    "*** Begin Patch\n*** Update File: solution.py\n@@\n-BLOCK = 128\n+BLOCK = 256\n*** End Patch"
)


def jsonl(*records: dict[str, Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def solution(transcript: Transcript, **options: Any) -> Any:
    found = solution_from_transcript(transcript, **options)
    assert found is not None
    return found


# -- Claude Code ---------------------------------------------------------------------------


def claude_session(*records: dict[str, Any]) -> Transcript:
    base = {"sessionId": "s", "cwd": "/w", "version": "2.0.1", "isSidechain": False}
    data = "".join(json.dumps({**base, **r}) + "\n" for r in records).encode()
    return parse_bytes(data, "s.jsonl")


def claude_assistant(n: int, *blocks: dict[str, Any]) -> dict[str, Any]:
    message = {"id": f"m{n}", "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks}
    return {"type": "assistant", "uuid": f"a{n}", "parentUuid": f"u{n - 1}", "message": message}


def claude_result(n: int, call_id: str, text: str = "ok", **extra: Any) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call_id, "content": text, **extra}]
    message = {"role": "user", "content": content}
    return {"type": "user", "uuid": f"u{n}", "parentUuid": f"a{n}", "message": message}


def tool_use(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def claude_prompt(text: str = "Write the kernel") -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": "u0",
        "parentUuid": None,
        "message": {"role": "user", "content": text},
    }


def test_claude_code_write_edit_and_multiedit_replay_onto_the_written_text():
    edits = [
        {"old_string": "return x", "new_string": "return x * 2"},
        {"old_string": "import torch", "new_string": "import torch  # v2"},
    ]
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL)),
        claude_result(1, "t1"),
        claude_assistant(
            2,
            {"type": "text", "text": "Now a bigger block."},
            tool_use("t2", "Edit", file_path="/w/solution.py", old_string="128", new_string="256"),
        ),
        claude_result(2, "t2"),
        claude_assistant(3, tool_use("t3", "MultiEdit", file_path="/w/solution.py", edits=edits)),
        claude_result(3, "t3"),
    )
    found = solution(transcript)
    assert (found.path, found.content, found.reason) == ("/w/solution.py", FINAL, None)
    assert (found.tool_name, found.thread_kind, found.thread_id) == ("MultiEdit", "main", "main")
    call = next(e for e in transcript.events() if e.call_id == "t3" and e.kind == "tool_call")
    assert found.event_id == call.id
    turn = next(t for t in transcript.main.turns if call in t.events)
    assert found.turn == turn.index


def test_a_failed_edit_changes_nothing():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL)),
        claude_result(1, "t1"),
        claude_assistant(
            2, tool_use("t2", "Edit", file_path="/w/solution.py", old_string="nope", new_string="x")
        ),
        claude_result(2, "t2", "String to replace not found", is_error=True),
    )
    found = solution(transcript)
    assert found.content == KERNEL and found.tool_name == "Write"


def test_replace_all_replaces_every_occurrence():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content="a a a\n")),
        claude_result(1, "t1"),
        claude_assistant(
            2,
            tool_use(
                "t2",
                "Edit",
                file_path="/w/solution.py",
                old_string="a",
                new_string="b",
                replace_all=True,
            ),
        ),
        claude_result(2, "t2"),
    )
    assert solution(transcript).content == "b b b\n"


def test_an_edit_of_a_file_the_log_never_wrote_whole_says_so():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(
            1,
            tool_use("t1", "Edit", file_path="/w/solution.py", old_string="128", new_string="256"),
        ),
        claude_result(1, "t1"),
    )
    found = solution(transcript)
    assert found.content is None
    assert (
        found.reason == "solution.py is edited at turn 1 by Edit but never written whole in the log"
    )


def test_a_later_whole_write_makes_the_content_known_again():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(
            1, tool_use("t1", "Edit", file_path="/w/solution.py", old_string="1", new_string="2")
        ),
        claude_result(1, "t1"),
        claude_assistant(2, tool_use("t2", "Write", file_path="/w/solution.py", content=KERNEL)),
        claude_result(2, "t2"),
    )
    assert solution(transcript).content == KERNEL


def test_an_edit_whose_old_text_was_never_written_makes_the_content_unknown():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL)),
        claude_result(1, "t1"),
        claude_assistant(2, tool_use("t2", "Bash", command="python tune.py --in-place")),
        claude_result(2, "t2"),
        claude_assistant(
            3,
            tool_use(
                "t3",
                "Edit",
                file_path="/w/solution.py",
                old_string="BLOCK = 512",
                new_string="BLOCK = 1024",
            ),
        ),
        claude_result(3, "t3"),
    )
    found = solution(transcript)
    assert found.content is None and found.turn == 3
    assert "not in what the log wrote of it before" in (found.reason or "")


def test_a_log_that_never_writes_the_solution_gives_none():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/notes.md", content="plan\n")),
        claude_result(1, "t1"),
    )
    assert solution_from_transcript(transcript) is None
    assert [f.path for f in written_files(transcript)] == ["/w/notes.md"]


def test_the_starter_copy_is_not_the_solution():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL)),
        claude_result(1, "t1"),
        claude_assistant(
            2, tool_use("t2", "Write", file_path="/w/starter/solution.py", content="old\n")
        ),
        claude_result(2, "t2"),
    )
    assert solution(transcript).content == KERNEL


def test_a_copy_of_the_known_starter_edited_in_place_is_the_solution():
    # A triton2triton agent's way: copy the starter it found, then edit the copy.
    starter = {"starter/solution.py": KERNEL, "reference.py": "class Model: ...\n"}
    copy = shell_call("s1", "cp starter/solution.py solution.py", workdir="/repo")
    patch = {
        "type": "custom_tool_call",
        "call_id": "p1",
        "name": "apply_patch",
        "input": PATCH_TUNE,
    }
    transcript = codex_rollout(copy, codex_output("s1"), patch, codex_output("p1"))
    found = solution(transcript, known=starter)
    assert (found.path, found.content, found.tool_name) == ("solution.py", TUNED, "apply_patch")
    without = solution(transcript)
    assert without.content is None and "copied" in (without.reason or "")
    # What the agent found is where it starts, never something the log wrote.
    assert [f.path for f in written_files(transcript, known=starter)] == ["solution.py"]


def test_an_edit_of_a_known_file_by_its_absolute_path_starts_from_its_text():
    edit = {"old_string": "BLOCK = 128", "new_string": "BLOCK = 256"}
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Edit", file_path="/w/solution.py", **edit)),
        claude_result(1, "t1"),
    )
    assert solution(transcript, known={"solution.py": KERNEL}).content == TUNED
    named = file_from_transcript(transcript, "solution.py", known={"solution.py": KERNEL})
    assert (named.content, named.turn) == (TUNED, 1)


def test_the_last_written_solution_wins_and_the_task_folder_is_preferred():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(
            1, tool_use("t1", "Write", file_path="/w/cc-softmax/solution.py", content=KERNEL)
        ),
        claude_result(1, "t1"),
        claude_assistant(
            2, tool_use("t2", "Write", file_path="/w/cc-matmul/solution.py", content=TUNED)
        ),
        claude_result(2, "t2"),
    )
    assert solution(transcript).content == TUNED
    assert solution(transcript, task_slug="cc-softmax").content == KERNEL


def test_a_file_defining_model_new_is_the_fallback_solution():
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/kernel.py", content=KERNEL)),
        claude_result(1, "t1"),
        claude_assistant(
            2, tool_use("t2", "Write", file_path="/w/bench.py", content="import kernel\n")
        ),
        claude_result(2, "t2"),
    )
    assert solution(transcript).path == "/w/kernel.py"
    assert solution_from_transcript(transcript, defining=None) is None


def test_a_subagent_that_writes_the_solution_is_replayed_where_it_was_spawned():
    lines = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "s",
            "cwd": "/w",
            "model": "claude-sonnet-4-5",
        },
        {
            "type": "user",
            "message": {"role": "user", "content": "Write the kernel"},
            "parent_tool_use_id": None,
        },
        {
            "type": "assistant",
            "parent_tool_use_id": None,
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL),
                    tool_use("task", "Task", description="Tune it", prompt="Tune the block size"),
                ],
            },
        },
        {
            "type": "user",
            "parent_tool_use_id": None,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
        },
        {
            "type": "user",
            "parent_tool_use_id": "task",
            "message": {"role": "user", "content": "Tune the block size"},
        },
        {
            "type": "assistant",
            "parent_tool_use_id": "task",
            "message": {
                "id": "m2",
                "role": "assistant",
                "content": [
                    tool_use(
                        "t2", "Edit", file_path="/w/solution.py", old_string="128", new_string="256"
                    )
                ],
            },
        },
        {
            "type": "user",
            "parent_tool_use_id": "task",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}],
            },
        },
        {
            "type": "user",
            "parent_tool_use_id": None,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "task", "content": "Done"}],
            },
        },
        {"type": "result", "subtype": "success", "is_error": False, "result": "ok"},
    ]
    transcript = parse_bytes(jsonl(*lines), "stream.jsonl")
    found = solution(transcript)
    assert found.content == TUNED
    assert found.thread_kind == "subagent" and found.tool_name == "Edit"


def test_a_named_file_the_log_never_writes_is_a_clear_error():
    transcript = claude_session(
        claude_prompt("Start from kernel_v2.py"),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL)),
        claude_result(1, "t1"),
    )
    assert file_from_transcript(transcript, "solution.py").content == KERNEL
    assert file_from_transcript(transcript, "/w/solution.py").content == KERNEL
    with pytest.raises(FileNotWritten) as named:
        file_from_transcript(transcript, "kernel_v2.py")
    assert str(named.value) == "kernel_v2.py: the log names this file but never writes it"
    with pytest.raises(FileNotWritten) as unnamed:
        file_from_transcript(transcript, "other.py")
    assert str(unnamed.value) == "other.py: the log never names this file"


def test_whether_the_log_names_the_task():
    transcript = claude_session(
        claude_prompt("Optimize the cc_softmax kernel"),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL)),
        claude_result(1, "t1"),
    )
    assert log_names_task(transcript, slug="cc-softmax")
    assert not log_names_task(transcript, slug="t2c-argmax")
    assert log_names_task(transcript, slug="t2c-argmax", file_names=["solution.py"])


# -- Codex ---------------------------------------------------------------------------------


def codex_rollout(*items: dict[str, Any]) -> Transcript:
    meta = {
        "id": "c1",
        "timestamp": "2025-11-20T11:00:00.000Z",
        "cwd": "/repo",
        "cli_version": "0.58.0",
    }
    records = [
        {"timestamp": "2025-11-20T11:00:00.000Z", "type": "session_meta", "payload": meta},
        {
            "timestamp": "2025-11-20T11:00:01.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Go"}],
            },
        },
    ]
    records += [
        {
            "timestamp": f"2025-11-20T11:00:{n + 2:02d}.000Z",
            "type": "response_item",
            "payload": item,
        }
        for n, item in enumerate(items)
    ]
    return parse_bytes(jsonl(*records), "rollout-2025-11-20T11-00-00-c1.jsonl")


def codex_output(call_id: str, exit_code: int = 0) -> dict[str, Any]:
    output = json.dumps({"output": "Done", "metadata": {"exit_code": exit_code}})
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}


def shell_call(call_id: str, script: str, **extra: Any) -> dict[str, Any]:
    arguments = json.dumps({"command": ["bash", "-lc", script], **extra})
    return {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}


def test_codex_apply_patch_adds_then_updates_the_file():
    add = (
        "*** Begin Patch\n*** Add File: solution.py\n"
        + "".join(f"+{line}\n" for line in KERNEL.splitlines())
        + "*** End Patch"
    )
    update = PATCH_TUNE
    transcript = codex_rollout(
        {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": add},
        codex_output("p1"),
        {"type": "custom_tool_call", "call_id": "p2", "name": "apply_patch", "input": update},
        codex_output("p2"),
    )
    found = solution(transcript)
    assert (found.path, found.content, found.tool_name) == ("solution.py", TUNED, "apply_patch")


def test_a_failed_apply_patch_changes_nothing():
    add = "*** Begin Patch\n*** Add File: solution.py\n+x = 1\n*** End Patch"
    update = "*** Begin Patch\n*** Update File: solution.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
    transcript = codex_rollout(
        {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": add},
        codex_output("p1"),
        {"type": "custom_tool_call", "call_id": "p2", "name": "apply_patch", "input": update},
        codex_output("p2", exit_code=1),
    )
    assert solution(transcript).content == "x = 1\n"


def test_codex_heredocs_write_the_file_and_a_later_patch_applies_to_them():
    script = f"cat > solution.py <<'EOF'\n{KERNEL}EOF\npython check.py"
    patch = f"apply_patch <<'EOF'\n{PATCH_TUNE}\nEOF\n"
    transcript = codex_rollout(
        shell_call("s1", script, workdir="/repo"),
        {
            "type": "function_call_output",
            "call_id": "s1",
            "output": "Exit code: 1\nOutput:\nfailed",
        },
        shell_call("s2", patch, workdir="/repo"),
        {"type": "function_call_output", "call_id": "s2", "output": "Success"},
    )
    assert solution(transcript).content == TUNED


def test_heredoc_forms_tee_and_unquoted_delimiters():
    unquoted = "cd /repo && cat <<EOF > solution.py\nprice = \\$5\nEOF"
    transcript = codex_rollout(shell_call("s1", unquoted))
    assert solution(transcript).content == "price = $5\n"
    tee = "tee solution.py > /dev/null <<'PY'\nx = 1\nPY"
    assert solution(codex_rollout(shell_call("s1", tee))).content == "x = 1\n"
    expanded = "cat > solution.py <<EOF\nhome = $HOME\nEOF"
    found = solution(codex_rollout(shell_call("s1", expanded)))
    assert found.content is None and "with text the log does not hold" in (found.reason or "")


def test_exec_command_cmd_strings_and_in_place_edits():
    write = {
        "type": "function_call",
        "name": "exec_command",
        "call_id": "e1",
        "arguments": json.dumps({"cmd": f"cat > solution.py << 'EOF'\n{KERNEL}EOF"}),
    }
    sed = {
        "type": "function_call",
        "name": "exec_command",
        "call_id": "e2",
        "arguments": json.dumps({"cmd": "sed -i 's/128/256/' solution.py"}),
    }
    found = solution(codex_rollout(write, sed))
    assert found.content is None
    assert found.reason == (
        "solution.py is written at turn 1 by `sed -i s/128/256/ solution.py`, "
        "with text the log does not hold"
    )
    assert solution(codex_rollout(write)).content == KERNEL


def test_a_python_script_that_names_the_solution_may_have_rewritten_it():
    write = shell_call("s1", f"cat > solution.py <<'EOF'\n{KERNEL}EOF")
    rewrite = (
        "python - <<'EOF'\nfrom pathlib import Path\np = Path('solution.py')\n"
        "p.write_text(p.read_text().replace('128', '256'))\nEOF"
    )
    read_only = 'python -c "import solution; print(solution.BLOCK)"'
    assert solution(codex_rollout(write, shell_call("s2", read_only))).content == KERNEL
    found = solution(codex_rollout(write, shell_call("s2", rewrite)))
    assert found.content is None
    assert (found.reason or "").startswith("solution.py may be rewritten at turn 1 by `python")


def test_copies_and_moves_carry_the_known_text():
    script = f"cat > draft.py <<'EOF'\n{KERNEL}EOF\ncp draft.py solution.py\nmv draft.py old/"
    transcript = codex_rollout(shell_call("s1", script))
    assert solution(transcript).content == KERNEL
    starter = codex_rollout(shell_call("s1", "cp starter/solution.py ."))
    found = solution(starter)
    assert found.content is None and "copied" in (found.reason or "")


def test_codex_exec_heredoc_and_a_file_change_without_a_diff():
    command = "bash -lc 'cat > solution.py <<'\"'\"'EOF'\"'\"'\n" + KERNEL + "EOF'"
    lines = [
        {"type": "thread.started", "thread_id": "x"},
        {"type": "turn.started"},
        {
            "type": "item.completed",
            "item": {
                "id": "i1",
                "type": "command_execution",
                "command": command,
                "aggregated_output": "",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {"id": "i2", "type": "agent_message", "text": "Written."},
        },
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1},
        },
    ]
    transcript = parse_bytes(jsonl(*lines), "exec.jsonl")
    assert solution(transcript).content == KERNEL
    patched = {
        "type": "item.completed",
        "item": {
            "id": "i3",
            "type": "file_change",
            "status": "completed",
            "changes": [{"path": "solution.py", "kind": "update"}],
        },
    }
    found = solution(parse_bytes(jsonl(*lines[:-1], patched, lines[-1]), "exec.jsonl"))
    assert found.content is None
    assert (
        found.reason
        == "solution.py is written at turn 0 by apply_patch, with text the log does not hold"
    )


# -- Cursor --------------------------------------------------------------------------------


def cursor_call(
    call_id: str, kind: str, args: dict[str, Any], result: dict[str, Any]
) -> dict[str, Any]:
    body = {f"{kind}ToolCall": {"args": args, "result": {"success": result}}}
    return {
        "type": "tool_call",
        "subtype": "completed",
        "call_id": call_id,
        "tool_call": body,
        "model_call_id": "mc-1",
        "session_id": "c",
    }


def test_cursor_write_then_an_edit_recorded_as_a_diff():
    diff = "@@ -3,1 +3,1 @@\n-BLOCK = 128\n+BLOCK = 256"
    lines = [
        {"type": "system", "subtype": "init", "cwd": "/w", "session_id": "c", "model": "gpt-5"},
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": "Go"}]},
            "session_id": "c",
        },
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Writing."}]},
            "session_id": "c",
            "model_call_id": "mc-1",
        },
        cursor_call(
            "w", "write", {"path": "/w/solution.py", "fileText": KERNEL}, {"path": "/w/solution.py"}
        ),
        cursor_call(
            "e",
            "edit",
            {"path": "/w/solution.py", "streamContent": "BLOCK = 256"},
            {"path": "/w/solution.py", "diffString": diff},
        ),
    ]
    found = solution(parse_bytes(jsonl(*lines), "cursor.jsonl"))
    assert (found.content, found.tool_name) == (TUNED, "edit")


def test_cursor_agent_transcript_write_then_str_replace():
    lines = [
        {
            "role": "user",
            "message": {
                "content": [{"type": "text", "text": "<user_query>\nWrite it\n</user_query>"}]
            },
        },
        {
            "role": "assistant",
            "message": {
                "content": [
                    {"type": "text", "text": "Writing."},
                    {
                        "type": "tool_use",
                        "name": "Write",
                        "input": {"path": "/w/solution.py", "contents": KERNEL},
                    },
                ]
            },
        },
        {
            "role": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "name": "StrReplace",
                        "input": {
                            "path": "/w/solution.py",
                            "old_string": "BLOCK = 128",
                            "new_string": "BLOCK = 256",
                        },
                    }
                ]
            },
        },
        {"type": "turn_ended", "status": "success"},
    ]
    transcript = parse_bytes(jsonl(*lines), "c0ffee01-aaaa-4bbb-8ccc-000000000001.jsonl")
    assert transcript.format == "cursor-agent-transcript"
    assert solution(transcript).content == TUNED


# -- Gemini CLI and Qwen Code --------------------------------------------------------------


def gemini_call(call_id: str, name: str, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    response = {"functionResponse": {"id": call_id, "name": name, "response": {"output": "ok"}}}
    return {
        "id": call_id,
        "name": name,
        "args": args,
        "result": [response],
        "status": "success",
        **extra,
    }


def test_gemini_write_file_then_replace():
    display = {
        "fileDiff": "Index: solution.py\n===\n--- solution.py\tCurrent\n+++ solution.py\tProposed\n"
        "@@ -3,1 +3,1 @@\n-BLOCK = 128\n+BLOCK = 256\n",
        "fileName": "solution.py",
    }
    session = {
        "sessionId": "g",
        "projectHash": "ab",
        "startTime": "2025-10-18T14:57:28.974Z",
        "messages": [
            {
                "id": "1",
                "timestamp": "2025-10-18T14:57:28.974Z",
                "type": "user",
                "content": "Write it",
            },
            {
                "id": "2",
                "timestamp": "2025-10-18T14:57:40.000Z",
                "type": "gemini",
                "content": "Done.",
                "model": "gemini-2.5-pro",
                "toolCalls": [
                    gemini_call(
                        "w", "write_file", {"file_path": "/w/solution.py", "content": KERNEL}
                    ),
                    gemini_call(
                        "r",
                        "replace",
                        {
                            "file_path": "/w/solution.py",
                            "old_string": "BLOCK = 128",
                            "new_string": "BLOCK = 256",
                        },
                        resultDisplay=display,
                    ),
                ],
            },
        ],
    }
    transcript = parse_bytes(json.dumps(session).encode(), "session-g.json")
    assert transcript.format == "gemini-cli-session"
    found = solution(transcript)
    assert (found.content, found.tool_name) == (TUNED, "replace")


def test_a_corrected_replace_falls_back_on_the_recorded_diff():
    # Gemini CLI may correct an old_string that does not match; its display shows what it did.
    display = {
        "fileDiff": "--- solution.py\n+++ solution.py\n" + HUNK_TUNE,
        "fileName": "solution.py",
    }
    session = {
        "sessionId": "g",
        "projectHash": "ab",
        "startTime": "2025-10-18T14:57:28.974Z",
        "messages": [
            {
                "id": "1",
                "timestamp": "2025-10-18T14:57:28.974Z",
                "type": "user",
                "content": "Write it",
            },
            {
                "id": "2",
                "timestamp": "2025-10-18T14:57:40.000Z",
                "type": "gemini",
                "content": "Done.",
                "model": "gemini-2.5-pro",
                "toolCalls": [
                    gemini_call(
                        "w", "write_file", {"file_path": "/w/solution.py", "content": KERNEL}
                    ),
                    gemini_call(
                        "r",
                        "replace",
                        {
                            "file_path": "/w/solution.py",
                            "old_string": "BLOCK  = 128",
                            "new_string": "BLOCK = 256",
                        },
                        resultDisplay=display,
                    ),
                ],
            },
        ],
    }
    assert solution(parse_bytes(json.dumps(session).encode(), "session-g.json")).content == TUNED


def test_qwen_write_file_then_edit():
    base = {
        "sessionId": "q",
        "cwd": "/w",
        "version": "0.6.2",
        "timestamp": "2026-04-10T08:00:00.000Z",
    }

    def call(uuid: str, call_id: str, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        response = {"functionResponse": {"id": call_id, "name": name, "response": {"output": "ok"}}}
        return [
            {
                **base,
                "uuid": uuid,
                "type": "assistant",
                "model": "qwen3-coder-plus",
                "message": {
                    "role": "model",
                    "parts": [{"functionCall": {"id": call_id, "name": name, "args": args}}],
                },
            },
            {
                **base,
                "uuid": uuid + "r",
                "type": "tool_result",
                "message": {"role": "user", "parts": [response]},
                "toolCallResult": {"callId": call_id, "status": "success"},
            },
        ]

    lines = [
        {
            **base,
            "uuid": "1",
            "type": "user",
            "message": {"role": "user", "parts": [{"text": "Write it"}]},
        },
        *call("2", "w", "write_file", {"file_path": "/w/solution.py", "content": KERNEL}),
        *call(
            "3",
            "e",
            "edit",
            {
                "file_path": "/w/solution.py",
                "old_string": "BLOCK = 128",
                "new_string": "BLOCK = 256",
            },
        ),
    ]
    transcript = parse_bytes(jsonl(*lines), "q.jsonl")
    assert transcript.format == "qwen-code-jsonl"
    assert solution(transcript).content == TUNED


# -- OpenCode ------------------------------------------------------------------------------


OPENCODE_T0 = 1_771_400_000_000  # ms


def opencode_message(n: int, role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] = {"id": f"msg_{n}", "sessionID": "ses_1", "role": role}
    info["time"] = {"created": OPENCODE_T0 + n * 1000}
    if role == "assistant":
        info.update(modelID="claude-sonnet-4-5", providerID="anthropic", cost=0)
        info["tokens"] = {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    full = [
        {"id": f"prt_{n}{k:03d}", "sessionID": "ses_1", "messageID": f"msg_{n}", **part}
        for k, part in enumerate(parts)
    ]
    return {"info": info, "parts": full}


def opencode_tool(tool: str, call_id: str, **args: Any) -> dict[str, Any]:
    state = {"status": "completed", "input": args, "output": "", "metadata": {}}
    state["time"] = {"start": OPENCODE_T0, "end": OPENCODE_T0 + 50}
    return {"type": "tool", "callID": call_id, "tool": tool, "state": state}


def test_opencode_write_edit_and_patch():
    patch = (
        "*** Begin Patch\n*** Update File: /home/dev/solution.py\n"
        "@@\n-        return x\n+        return x * 2\n*** End Patch"
    )
    session = {"id": "ses_1", "projectID": "p", "directory": "/home/dev", "title": "t"}
    session["time"] = {"created": OPENCODE_T0, "updated": OPENCODE_T0 + 9000}
    export = {
        "info": session,
        "messages": [
            opencode_message(1, "user", {"type": "text", "text": "Write the kernel"}),
            opencode_message(
                2,
                "assistant",
                {"type": "text", "text": "Writing."},
                opencode_tool("write", "c1", filePath="/home/dev/solution.py", content=KERNEL),
                opencode_tool(
                    "edit",
                    "c2",
                    filePath="/home/dev/solution.py",
                    oldString="BLOCK = 128",
                    newString="BLOCK = 256",
                ),
                opencode_tool("patch", "c3", patchText=patch),
            ),
        ],
    }
    transcript = parse_bytes(json.dumps(export).encode(), "session.json")
    assert transcript.format.startswith("opencode")
    found = solution(transcript)
    assert (found.content, found.tool_name) == (TUNED.replace("return x", "return x * 2"), "patch")


# -- the other formats whose parsers expose file writes ------------------------------------


def test_copilot_create_str_replace_and_insert():
    def call(call_id: str, name: str, **args: Any) -> list[dict[str, Any]]:
        request = {"toolCallId": call_id, "name": name, "arguments": args}
        return [
            {"type": "assistant.message", "data": {"content": "", "toolRequests": [request]}},
            {
                "type": "tool.execution_complete",
                "data": {"toolCallId": call_id, "success": True, "result": {"content": "ok"}},
            },
        ]

    lines = [
        {"type": "session.start", "data": {"sessionId": "s", "context": {"cwd": "/w"}}},
        {"type": "user.message", "data": {"content": "Write it"}},
        *call("c", "create", path="/w/solution.py", file_text=KERNEL),
        *call("e", "edit", path="/w/solution.py", old_str="BLOCK = 128", new_str="BLOCK = 256"),
        *call(
            "i",
            "str_replace_editor",
            command="insert",
            path="/w/solution.py",
            insert_line=0,
            new_str="# tuned",
        ),
    ]
    transcript = parse_bytes(jsonl(*lines), "events.jsonl")
    assert transcript.format == "copilot-cli-events"
    assert solution(transcript).content == "# tuned\n" + TUNED


def test_droid_create_then_edit():
    def call(call_id: str, name: str, **args: Any) -> list[dict[str, Any]]:
        return [
            {
                "type": "tool_call",
                "id": call_id,
                "messageId": "a",
                "toolId": name,
                "toolName": name,
                "parameters": args,
                "timestamp": 1771400001100,
                "session_id": "d",
            },
            {
                "type": "tool_result",
                "id": call_id,
                "messageId": "t",
                "toolId": name,
                "isError": False,
                "value": "ok",
                "timestamp": 1771400001200,
                "session_id": "d",
            },
        ]

    lines = [
        {
            "type": "system",
            "subtype": "init",
            "cwd": "/w",
            "session_id": "d",
            "tools": [],
            "model": "claude-sonnet-4-5",
        },
        {
            "type": "message",
            "role": "user",
            "id": "u",
            "text": "Write it",
            "timestamp": 1771400000000,
            "session_id": "d",
        },
        *call("c", "Create", file_path="/w/solution.py", content=KERNEL),
        *call(
            "e", "Edit", file_path="/w/solution.py", old_str="BLOCK = 128", new_str="BLOCK = 256"
        ),
    ]
    transcript = parse_bytes(jsonl(*lines), "exec.jsonl")
    assert transcript.format == "droid-stream-json"
    assert solution(transcript).content == TUNED


def test_grok_write_then_search_replace():
    def call(call_id: str, name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "status": "pending",
                "rawInput": args,
                "_meta": {"x.ai/tool": {"name": name}},
            },
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed"},
        ]

    updates = [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "Write it"}},
        *call("1", "write_file", {"file_path": "solution.py", "content": KERNEL}),
        *call(
            "2",
            "search_replace",
            {"file_path": "solution.py", "old_string": "BLOCK = 128", "new_string": "BLOCK = 256"},
        ),
    ]
    lines = [
        {
            "timestamp": 1771000000 + n,
            "method": "session/update",
            "params": {"sessionId": "s", "update": u},
        }
        for n, u in enumerate(updates)
    ]
    transcript = parse_bytes(jsonl(*lines), "updates.jsonl")
    assert transcript.format == "grok-cli"
    assert solution(transcript).content == TUNED


def test_kimi_write_file_append_and_str_replace_file():
    def call(n: int, name: str, args: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        function = {"name": name, "arguments": json.dumps(args)}
        return [
            ("ToolCall", {"type": "function", "id": f"t{n}", "function": function}),
            (
                "ToolResult",
                {
                    "tool_call_id": f"t{n}",
                    "return_value": {"is_error": False, "output": "", "message": "ok"},
                },
            ),
        ]

    messages = [
        ("TurnBegin", {"user_input": [{"type": "text", "text": "Write it"}]}),
        ("StepBegin", {"n": 1}),
        *call(1, "WriteFile", {"path": "solution.py", "content": KERNEL}),
        *call(2, "WriteFile", {"path": "solution.py", "content": "# end\n", "mode": "append"}),
        *call(
            3,
            "StrReplaceFile",
            {"path": "solution.py", "edit": [{"old": "BLOCK = 128", "new": "BLOCK = 256"}]},
        ),
    ]
    lines = [{"type": "metadata", "protocol_version": "1.10"}] + [
        {"timestamp": 1767261600 + n, "message": {"type": kind, "payload": payload}}
        for n, (kind, payload) in enumerate(messages)
    ]
    transcript = parse_bytes(jsonl(*lines), "wire.jsonl")
    assert transcript.format == "kimi-cli"
    assert solution(transcript).content == TUNED + "# end\n"


def test_plain_message_lists_with_file_tools():
    openai = [
        {"role": "user", "content": "Write it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "write_file",
                        "arguments": json.dumps({"path": "solution.py", "content": KERNEL}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    assert solution(parse_bytes(json.dumps(openai).encode(), "chat.json")).content == KERNEL
    anthropic = {
        "messages": [
            {"role": "user", "content": "Write it"},
            {
                "role": "assistant",
                "content": [
                    tool_use("t1", "bash", command=f"cat > solution.py <<'EOF'\n{KERNEL}EOF")
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": ""}],
            },
        ]
    }
    assert solution(parse_bytes(json.dumps(anthropic).encode(), "messages.json")).content == KERNEL


# -- shell commands beyond heredocs --------------------------------------------------------


def test_a_deleted_solution_says_so_unless_another_is_left():
    removed = codex_rollout(
        shell_call("s1", f"cat > solution.py <<'EOF'\n{KERNEL}EOF\nrm solution.py")
    )
    found = solution(removed)
    assert (found.deleted, found.content) == (True, None)
    assert found.reason == "solution.py is deleted at turn 1 by `rm solution.py`"
    moved = f"cat > out/solution.py <<'EOF'\n{KERNEL}EOF\nmv out/solution.py solution.py"
    found = solution(codex_rollout(shell_call("s1", moved)))
    assert (found.path, found.content) == ("solution.py", KERNEL)


def test_a_write_to_a_path_held_in_a_variable_makes_every_file_unknown():
    script = f"cat > solution.py <<'EOF'\n{KERNEL}EOF\nsed -i 's/128/256/' \"$TARGET\""
    found = solution(codex_rollout(shell_call("s1", script)))
    assert found.content is None and "$TARGET" in (found.reason or "")


def test_a_refused_shell_command_wrote_nothing_but_a_failing_one_did():
    heredoc = f"cat > /w/solution.py <<'EOF'\n{KERNEL}EOF\npython check.py"
    refused = "The user doesn't want to proceed with this tool use."
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Bash", command=heredoc)),
        claude_result(1, "t1", "Traceback: check failed", is_error=True),
        claude_assistant(2, tool_use("t2", "Bash", command="echo gone > /w/solution.py")),
        claude_result(2, "t2", refused, is_error=True),
    )
    found = solution(transcript)
    assert (found.content, found.tool_name, found.turn) == (KERNEL, "Bash", 1)


def test_a_file_whose_text_holds_a_patch_envelope_is_written_not_applied():
    text = f"ENVELOPE = '''\n{PATCH_TUNE}\n'''\n"
    transcript = claude_session(
        claude_prompt(),
        claude_assistant(1, tool_use("t1", "Write", file_path="/w/solution.py", content=text)),
        claude_result(1, "t1"),
    )
    assert solution(transcript).content == text


def test_a_program_the_agent_wrote_and_ran_may_rewrite_the_files_it_names():
    def run(program: str, text: str, command: str) -> Any:
        return solution(
            claude_session(
                claude_prompt(),
                claude_assistant(
                    1, tool_use("t1", "Write", file_path="/w/solution.py", content=KERNEL)
                ),
                claude_result(1, "t1"),
                claude_assistant(
                    2, tool_use("t2", "Write", file_path=f"/w/{program}", content=text)
                ),
                claude_result(2, "t2"),
                claude_assistant(3, tool_use("t3", "Bash", command=command)),
                claude_result(3, "t3"),
            )
        )

    reader = "src = open('solution.py').read()\nif len(src) > 10:\n    print('ok')\n"
    assert run("bench.py", reader, "python bench.py").content == KERNEL
    writer = "open('solution.py', 'w').write(open('best.py').read())\n"
    assert run("pick.py", writer, "cd /w && python pick.py").content is None
    tuner = "#!/bin/sh\nsed -i 's/128/256/' solution.py\n"
    found = run("tune.sh", tuner, "./tune.sh")
    assert found.content is None and found.turn == 3
