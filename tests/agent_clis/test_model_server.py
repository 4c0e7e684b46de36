"""The scripted model server without any CLI: each API's replies, step by step."""

import json
import urllib.request

import pytest

from model_server import ScriptedModelServer, script_load
from model_server.script import ScriptError

SOLUTION = "solve-vector-add"


@pytest.fixture(scope="module")
def server():
    scripts = [script_load(name) for name in (SOLUTION, "endless", "broken-kernel")]
    with ScriptedModelServer(scripts[0], others=scripts[1:]) as running:
        yield running


def post(server, path: str, body: dict) -> bytes:
    request = urllib.request.Request(
        server.base_url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.read()


def sse_data(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def test_claude_code_gets_its_write_tool_with_an_absolute_path_streamed(server):
    history = [{"role": "user", "content": "Primary working directory: /box/ws\nsolve it"}]
    for _ in range(2):  # two tool results already: the third step writes the kernel
        history += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
        ]
    tools = [{"name": n} for n in ("Bash", "Read", "Write")]
    body = {"model": SOLUTION, "stream": True, "messages": history, "tools": tools}
    events = sse_data(post(server, "/v1/messages", body))
    assert events[0]["type"] == "message_start"
    assert events[0]["message"]["usage"]["input_tokens"] == 1200
    start = next(e for e in events if e.get("content_block", {}).get("type") == "tool_use")
    assert start["content_block"]["name"] == "Write"
    delta = next(e for e in events if e.get("delta", {}).get("type") == "input_json_delta")
    arguments = json.loads(delta["delta"]["partial_json"])
    assert arguments["file_path"] == "/box/ws/solution.py"
    assert "mask = offsets < n" in arguments["content"]
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_codex_gets_apply_patch_through_its_shell_tool_and_waits_for_commands(server):
    tools = [
        {
            "type": "function",
            "name": "exec_command",
            "parameters": {"properties": {"cmd": {}, "yield_time_ms": {}}},
        }
    ]
    outputs = [{"type": "function_call_output", "call_id": str(n)} for n in range(2)]
    body = {"model": SOLUTION, "stream": True, "tools": tools, "input": outputs}
    events = sse_data(post(server, "/v1/responses", body))
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    call = json.loads(done[-1]["arguments"])
    assert call["cmd"].startswith(
        "apply_patch <<'ARENA_EOF'\n*** Begin Patch\n*** Add File: solution.py"
    )
    assert events[-1]["response"]["usage"]["input_tokens"] == 1200
    body["input"] = [*outputs, {"type": "function_call_output", "call_id": "2"}]
    done = [
        e["item"]
        for e in sse_data(post(server, "/v1/responses", body))
        if e["type"] == "response.output_item.done"
    ]
    assert json.loads(done[-1]["arguments"]) == {"cmd": "./check", "yield_time_ms": 600_000}


def test_gemini_cli_gets_its_tools_by_their_declared_parameters(server):
    declarations = [
        {
            "name": "write_file",
            "parametersJsonSchema": {"properties": {"file_path": {}, "content": {}}},
        },
        {"name": "run_shell_command", "parametersJsonSchema": {"properties": {"command": {}}}},
    ]
    contents = [{"role": "user", "parts": [{"text": "go"}]}]
    body = {"contents": contents, "tools": [{"functionDeclarations": declarations}]}
    raw = post(server, f"/v1beta/models/{SOLUTION}:streamGenerateContent?alt=sse", body)
    (chunk,) = sse_data(raw)
    call = chunk["candidates"][0]["content"]["parts"][-1]["functionCall"]
    assert call["name"] == "run_shell_command" and call["args"] == {"command": "cat PROMPT.md"}
    side = {
        "contents": contents,
        "generationConfig": {
            "responseJsonSchema": {
                "properties": {"next_speaker": {"type": "string"}, "reasoning": {"type": "string"}}
            }
        },
    }
    reply = json.loads(post(server, f"/v1beta/models/{SOLUTION}:generateContent", side))
    text = reply["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text)["next_speaker"] == "user"


def test_a_model_named_like_a_script_plays_it_and_the_endless_one_never_ends(server):
    tools = [{"name": n} for n in ("Bash", "Write")]
    results = [{"role": "user", "content": [{"type": "tool_result"}] * 50}]
    body = {"model": "endless", "messages": results, "tools": tools}
    message = json.loads(post(server, "/v1/messages", body))
    assert message["content"][-1]["input"]["command"] == "sleep 4.25; ls"
    body["model"] = "broken-kernel"
    message = json.loads(post(server, "/v1/messages", body))
    assert message["stop_reason"] == "end_turn"  # past its last step, it only answers


def test_a_script_without_steps_is_refused_by_name(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"steps": [{"write": "solution.py"}]}')
    with pytest.raises(ScriptError, match=r"bad.json: step 1: `write` needs a `source` file"):
        script_load(bad)
