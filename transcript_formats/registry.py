"""Every log format, declared once: its id, how its files are recognised, its parser, the key
fields a parse must hold, and the harness an upload of it is labelled with.

Detection (detect.py), the key-field check (key_fields.py) and the upload path (the arena's
run_logs) read FORMATS and nothing else. Adding a format is a module that declares its
LogFormat and one line in FORMATS below.

Recognising a file: it is tried as one JSON document against every format's `document`
predicate, then its first records against every `records` predicate, each list in the order of
the ranks the formats give their predicates (lowest first); the first that holds names the
format. A rank is how specific the marks are: a format whose records another format's also
carry is tried before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import (
    antigravity,
    chat_messages,
    claude_ai_export,
    claude_code,
    claude_loglines,
    claude_stream_json,
    codex,
    codex_exec,
    copilot_cli,
    cursor,
    cursor_transcripts,
    droid,
    gemini,
    gemini_jsonl,
    grok,
    kimi,
    kimi_code,
    opencode,
    pi_session,
    qwen,
    sniffers,
)
from .key_fields import prompts_present
from .log_format import LogFormat

FORMATS: tuple[LogFormat, ...] = (
    LogFormat(
        "claude-code-jsonl",
        "Claude Code",
        claude_code.parse,
        "claude-code",
        records=((110, sniffers.claude_code_session),),
        claims_folder=True,
    ),
    LogFormat(
        "claude-code-stream-json",
        "Claude Code (stream-json)",
        claude_stream_json.parse,
        "claude-code",
        records=((100, sniffers.claude_stream_json),),
    ),
    claude_loglines.FORMAT_SPEC,
    LogFormat(
        "codex-rollout",
        "Codex",
        codex.parse,
        "codex",
        records=((10, sniffers.codex_rollout),),
    ),
    LogFormat(
        "codex-rollout-legacy",
        "Codex (before 0.44)",
        codex.parse,
        "codex",
        records=((150, sniffers.codex_rollout_legacy),),
    ),
    LogFormat(
        "codex-exec-json",
        "Codex (exec --json)",
        codex_exec.parse,
        "codex",
        records=((20, sniffers.codex_exec),),
    ),
    LogFormat(
        "cursor-stream-json",
        "Cursor",
        cursor.parse,
        "cursor",
        records=((60, sniffers.cursor_stream), (120, sniffers.cursor_stream_init)),
    ),
    LogFormat(
        "cursor-agent-transcript",
        "Cursor (agent transcripts)",
        cursor_transcripts.parse,
        "cursor",
        records=((90, sniffers.cursor_transcript),),
        key_fields=(prompts_present,),
    ),
    LogFormat(
        "gemini-cli-session",
        "Gemini CLI",
        gemini.parse,
        "gemini",
        document=((60, sniffers.gemini_session),),
    ),
    LogFormat(
        "gemini-cli-jsonl",
        "Gemini CLI (JSONL)",
        gemini_jsonl.parse,
        "gemini",
        records=((70, sniffers.gemini_jsonl),),
        key_fields=(prompts_present,),
    ),
    antigravity.FORMAT_SPEC,
    LogFormat(
        "qwen-code-jsonl",
        "Qwen Code",
        qwen.parse,
        "qwen-code",
        records=((80, sniffers.qwen_jsonl),),
        key_fields=(prompts_present,),
    ),
    LogFormat(
        "copilot-cli-events",
        "GitHub Copilot CLI",
        copilot_cli.parse,
        "copilot-cli",
        records=((50, sniffers.copilot_events),),
    ),
    LogFormat(
        "opencode-storage",
        "OpenCode",
        opencode.parse,
        "opencode",
        document=((30, sniffers.opencode_storage),),
    ),
    LogFormat(
        "opencode-export",
        "OpenCode (export)",
        opencode.parse,
        "opencode",
        document=((40, sniffers.opencode_export),),
    ),
    LogFormat(
        "droid-session",
        "Droid",
        droid.parse_session,
        "droid",
        records=((40, sniffers.droid_session),),
        document=((50, sniffers.droid_settings),),
    ),
    LogFormat(
        "droid-stream-json",
        "Droid (stream-json)",
        droid.parse_stream,
        "droid",
        records=((30, sniffers.droid_stream),),
    ),
    LogFormat(
        "kimi-cli",
        "Kimi CLI",
        kimi.parse,
        "kimi-cli",
        records=((130, sniffers.kimi_cli),),
    ),
    kimi_code.FORMAT_SPEC,
    pi_session.PI_FORMAT,
    pi_session.OPENCLAW_FORMAT,
    LogFormat(
        "grok-cli",
        "Grok CLI",
        grok.parse,
        "grok-cli",
        records=((140, sniffers.grok_cli),),
        document=((10, sniffers.grok_summary),),
    ),
    LogFormat(
        "claude-ai-export",
        "claude.ai export",
        claude_ai_export.parse,
        "claude-ai",
        document=((20, sniffers.claude_ai_export),),
    ),
    LogFormat(
        "openai-chat-messages",
        "OpenAI chat messages",
        chat_messages.parse,
        records=((160, sniffers.openai_chat_lines),),
        document=((90, sniffers.openai_chat_document),),
    ),
    LogFormat(
        "anthropic-messages",
        "Anthropic messages",
        chat_messages.parse,
        records=((160, sniffers.anthropic_chat_lines),),
        document=((90, sniffers.anthropic_chat_document),),
    ),
)

BY_ID: dict[str, LogFormat] = {spec.id: spec for spec in FORMATS}


def _ranked(
    pairs: list[tuple[int, int, Callable[[Any], bool], str]],
) -> tuple[tuple[Callable[[Any], bool], str], ...]:
    return tuple((sniff, fmt) for _, _, sniff, fmt in sorted(pairs, key=lambda p: p[:2]))


# (predicate, format id), in the order they are tried; ties keep FORMATS' order.
DOCUMENT_SNIFFERS = _ranked(
    [
        (rank, order, sniff, spec.id)
        for order, spec in enumerate(FORMATS)
        for rank, sniff in spec.document
    ]
)
RECORDS_SNIFFERS = _ranked(
    [
        (rank, order, sniff, spec.id)
        for order, spec in enumerate(FORMATS)
        for rank, sniff in spec.records
    ]
)


def format_named(fmt: str) -> LogFormat | None:
    return BY_ID.get(fmt)


def harness_by_format() -> dict[str, str]:
    """The harness each CLI's format is labelled with (chat lists name none)."""
    return {spec.id: spec.harness for spec in FORMATS if spec.harness}
