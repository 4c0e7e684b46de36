"""A scripted model server: real agent CLIs talk to it as to their vendor's API, and it plays a
script instead of a model.

It speaks enough of three wire formats for the CLIs the arena runs: the Anthropic Messages API
(Claude Code, streamed as server-sent events or not), the OpenAI Responses API (Codex, streamed)
and the Gemini API (Gemini CLI: generateContent, streamGenerateContent, countTokens). A script
(scripts/*.json) is a list of steps: read a file, run a shell command, write a file, answer.
Each step becomes one call of the CLI's own tool (Claude Code's Write and Bash, Codex's
apply_patch and shell, Gemini CLI's write_file and run_shell_command), found by name in the
tools the CLI declared, so the CLI really writes the kernel and really runs `./check`.

Tests run it in a thread (`ScriptedModelServer`); an operator checks a host with
`python -m model_server --script solve-vector-add` (docs/agents.md). Standard library only.
"""

from model_server.script import SCRIPTS_DIR, Script, script_load
from model_server.server import ScriptedModelServer

__all__ = ["SCRIPTS_DIR", "Script", "ScriptedModelServer", "script_load"]
