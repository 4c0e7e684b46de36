"""Logs from bench/transcript_logs.py: the parser finds exactly what the generator wrote."""

from __future__ import annotations

import pytest

from bench.transcript_logs import write_claude_code_session, write_codex_rollout
from transcript_formats import EventKind, parse_path
from transcript_formats.diffs import apply_unified_diff

from .transcript_readers import events_of


@pytest.fixture(scope="module")
def claude(tmp_path_factory):
    path = tmp_path_factory.mktemp("claude") / "8f0c2d4e-session.jsonl"
    expected = write_claude_code_session(path, target_bytes=2_000_000, events=1_500)
    return parse_path(path), expected


@pytest.fixture(scope="module")
def codex(tmp_path_factory):
    path = tmp_path_factory.mktemp("codex") / "rollout-2025-11-20T12-00-00-x.jsonl"
    expected = write_codex_rollout(path, target_bytes=600_000)
    return parse_path(path), expected


def _usage(transcript, **kwargs):
    usage = transcript.usage(**kwargs)
    return (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
    )


def test_generated_claude_session_tokens_match_the_generator(claude):
    transcript, expected = claude
    assert _usage(transcript) == (
        expected.input_tokens,
        expected.output_tokens,
        expected.cache_read_tokens,
        expected.cache_write_tokens,
    )
    assert transcript.usage(include_subagents=False).input_tokens == expected.main_input_tokens
    calls = sum(1 for t in transcript.threads for turn in t.turns if turn.usage is not None)
    assert calls == expected.model_calls


def test_generated_claude_session_counts_match_the_generator(claude):
    transcript, expected = claude
    assert len(transcript.events()) == expected.events
    assert len(events_of(transcript, EventKind.TOOL_CALL)) == expected.tool_calls
    assert len(events_of(transcript, EventKind.FILE_CHANGE)) == expected.file_changes
    subagents = [t for t in transcript.threads if t.kind == "subagent"]
    assert len(subagents) == expected.subagents > 0
    assert all(t.parent_event for t in subagents)
    assert len(events_of(transcript, EventKind.COMPACTION)) == 1
    assert transcript.malformed == [] and transcript.notes == []


def _rebuilt_files(transcript) -> dict[str, str]:
    files: dict[str, str] = {}
    for change in events_of(transcript, EventKind.FILE_CHANGE):
        key = change.path.removeprefix("/workspace/")
        files[key] = apply_unified_diff(files.get(key, ""), change.diff)
    return files


def test_generated_claude_diffs_applied_in_order_rebuild_every_file(claude):
    transcript, expected = claude
    assert _rebuilt_files(transcript) == expected.files


def test_generated_codex_rollout_tokens_and_counts_match(codex):
    transcript, expected = codex
    assert _usage(transcript) == (
        expected.input_tokens,
        expected.output_tokens,
        expected.cache_read_tokens,
        0,
    )
    calls = sum(1 for turn in transcript.main.turns if turn.usage is not None)
    assert calls == expected.model_calls
    assert len(transcript.events()) == expected.events
    assert len(events_of(transcript, EventKind.FILE_CHANGE)) == expected.file_changes


def test_generated_codex_patches_applied_in_order_rebuild_every_file(codex):
    transcript, expected = codex
    assert _rebuilt_files(transcript) == expected.files
