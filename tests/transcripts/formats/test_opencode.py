"""OpenCode: its storage folder (as a folder and as a .zip) and `opencode export`."""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import pytest

from transcript_formats import (
    ArchiveError,
    ArchiveLimits,
    EventKind,
    TranscriptFormatError,
    detect_format,
    parse_bytes,
    parse_path,
)
from transcript_formats.diffs import apply_unified_diff

from .hostile_logs import assert_payloads_stay_text, fuzz, mutated_document, parse_or_refuse
from .opencode_storage import CHILD, MAIN, export_document, write_storage
from .payload_fields import carries_payloads, with_payloads
from .transcript_readers import events_of, texts, usage_tuple


@pytest.fixture(scope="module")
def storage(tmp_path_factory) -> Path:
    return write_storage(tmp_path_factory.mktemp("opencode"))


@pytest.fixture(scope="module")
def opencode(storage):
    return parse_path(storage)


def zipped(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"opencode/{path.relative_to(folder.parent).as_posix()}")
    return buffer.getvalue()


def test_each_step_is_a_model_call_charged_its_own_tokens(opencode):
    calls = [t for t in opencode.main.turns if t.usage]
    # step-finish tokens (input, output + reasoning, cache read, cache write):
    assert [usage_tuple(t.usage) for t in calls] == [
        (1000, 200 + 50, 5000, 2000),
        (30, 120, 7000, 300),
        (20, 80, 7500, 100),  # also the message's own `tokens`: not counted a second time
        (10, 40, 8000, 0),
        (5, 30 + 10, 8100, 0),
    ]
    # 1,000 + 30 + 20 + 10 + 5; 250 + 120 + 80 + 40 + 40; 5,000 + 7,000 + 7,500 + 8,000 + 8,100
    assert usage_tuple(opencode.usage(include_subagents=False)) == (1065, 530, 35600, 2400)
    # the child session: (100, 50, 0, 900) + (10, 20, 900, 0)
    assert usage_tuple(opencode.thread(CHILD).usage()) == (110, 70, 900, 900)
    assert usage_tuple(opencode.usage()) == (1175, 600, 36500, 3300)


def test_cost_is_the_sum_of_the_shown_messages_costs(opencode):
    # 0.05 + 0.01 + 0.005 + 0 (main) + 0.002 (child); the other session's 1.0 is not shown
    assert opencode.cost_usd == pytest.approx(0.067) and not opencode.cost_computed


def test_session_details_and_the_other_session_noted(opencode):
    assert opencode.format == "opencode-storage"
    assert opencode.session_id == MAIN and opencode.cwd == "/home/dev/kernels"
    assert opencode.cli_version == "0.15.8" and opencode.model == "claude-sonnet-4-5-20250929"
    assert any("1 other session" in note and "ses_5a1e" in note for note in opencode.notes)
    assert "old question" not in texts(opencode, EventKind.USER_TEXT)


def test_parts_become_events(opencode):
    user = texts(opencode, EventKind.USER_TEXT, "main")
    assert user[0] == "Speed up k.py, see the profile" and user[-1] == "stop"
    [image] = [e for e in events_of(opencode, EventKind.USER_TEXT) if e.images]
    assert image.images[0].media_type == "image/png" and image.images[0].data
    notices = events_of(opencode, EventKind.SYSTEM_NOTICE, "main")
    assert notices[0].text == "Called the Read tool on k.py" and not notices[0].is_error
    assert notices[-1].text == "The operation was aborted." and notices[-1].is_error
    assert texts(opencode, EventKind.REASONING) == ["Look at k.py first."]
    calls = events_of(opencode, EventKind.TOOL_CALL, "main")
    assert [c.tool_name for c in calls] == ["read", "edit", "apply_patch", "bash", "bash", "task"]
    results = {e.call_id: e for e in events_of(opencode, EventKind.TOOL_RESULT)}
    assert results["toolu_test"].is_error  # exit code 1
    assert results["toolu_rm"].is_error and "rejected" in results["toolu_rm"].text
    assert not results["toolu_read"].is_error
    assert events_of(opencode, EventKind.UNKNOWN)[0].raw_type == "widget"


def test_edits_become_exact_diffs(opencode):
    edit, patch = events_of(opencode, EventKind.FILE_CHANGE)
    # the recorded jsdiff patch, its `Index:` and `====` lines dropped
    assert edit.diff.startswith("--- a/home/dev/kernels/k.py\n+++ b/home/dev/kernels/k.py\n@@")
    before = "def k(x):\n    return [v * 2 for v in x]\n"
    assert apply_unified_diff(before, edit.diff) == "def k(x):\n    return x * 2\n"
    assert (
        patch.path == "bench.py"
        and apply_unified_diff("", patch.diff) == "import k\nprint(k.k(2))\n"
    )


def test_the_child_session_hangs_under_its_task_call(opencode):
    child = opencode.thread(CHILD)
    assert child.kind == "subagent" and child.title.startswith("Benchmark k.py")
    [spawn] = events_of(opencode, EventKind.SUBAGENT_SPAWN)
    assert spawn.call_id == "toolu_task" and child.parent_event == spawn.id
    assert texts(opencode, EventKind.ASSISTANT_TEXT, CHILD) == ["It takes 0.2 s."]


def test_a_zipped_storage_folder_reads_the_same(storage, opencode):
    from_zip = parse_bytes(zipped(storage), "opencode.zip")
    assert from_zip.format == "opencode-storage"
    assert usage_tuple(from_zip.usage()) == usage_tuple(opencode.usage())
    assert len(from_zip.events()) == len(opencode.events())


def test_an_export_reads_like_the_folder(opencode):
    data = json.dumps(export_document()).encode()
    exported = parse_bytes(data, "session.json")
    assert exported.format == "opencode-export"
    assert usage_tuple(exported.usage()) == usage_tuple(opencode.usage(include_subagents=False))
    assert exported.malformed == []
    # an export holds one session: the task call has no child to show
    assert len(exported.threads) == 1


def test_early_messages_without_steps_are_charged_their_own_tokens(tmp_path):
    message = {
        "id": "msg_1",
        "sessionID": "ses_1",
        "role": "assistant",
        "time": {"created": 1},
        "modelID": "gpt-5",
        "cost": 0,
        "tokens": {"input": 300, "output": 20, "reasoning": 5, "cache": {"read": 700, "write": 0}},
    }
    part = {"id": "prt_1", "sessionID": "ses_1", "messageID": "msg_1", "type": "text", "text": "hi"}
    # the 0.3-era layout: session/message/<session>/ and session/part/<session>/<message>/
    for path, value in (("session/message/ses_1/msg_1.json", message),
                        ("session/part/ses_1/msg_1/prt_1.json", part)):  # fmt: skip
        (tmp_path / path).parent.mkdir(parents=True)
        (tmp_path / path).write_text(json.dumps(value))
    early = parse_path(tmp_path)
    assert usage_tuple(early.usage()) == (300, 20 + 5, 700, 0)
    # no cost in the log: gpt-5 $1.25/$10/$0.125: 300*1.25 + 25*10 + 700*0.125 = 712.5 per M
    assert early.cost_computed and early.cost_usd == pytest.approx(712.5 / 1e6, abs=1e-6)


def test_each_storage_file_is_detected_and_foreign_json_is_not(storage):
    part = next((storage / "part").rglob("*.json"))
    message = next((storage / "message").rglob("*.json"))
    assert detect_format(part) == "opencode-storage"
    assert detect_format(message) == "opencode-storage"
    with pytest.raises(TranscriptFormatError):
        detect_format(next((storage / "project").rglob("*.json")))


def test_a_cut_file_is_left_out_and_a_strange_one_is_read_around(tmp_path):
    storage = write_storage(tmp_path)
    cut = storage / "part" / "msg_6d2f0c1a6002" / "prt_zz.json"
    cut.write_text('{"id": "prt_zz", "sessionID": "' + MAIN + '", "messageID": "msg_6d')
    odd = storage / "message" / MAIN / "msg_zz.json"
    odd.write_text(json.dumps({"id": "msg_zz", "sessionID": MAIN, "role": "assistant", "time": 5}))
    transcript = parse_path(storage)
    # the cut file is no JSON: detection leaves it out; the odd message adds nothing
    assert transcript.malformed == []
    assert usage_tuple(transcript.usage()) == (1175, 600, 36500, 3300)


def test_parts_whose_message_is_missing_are_reported(tmp_path):
    storage = write_storage(tmp_path)
    (storage / "message" / MAIN / "msg_6d2f0c1a8004.json").unlink()
    transcript = parse_path(storage)
    [missing] = transcript.malformed
    assert missing.source.startswith("part/msg_6d2f0c1a8004/")
    assert "4 part(s) of message msg_6d2f0c1a8004" in missing.reason
    assert "k.py is 2x faster; one test fails." not in texts(transcript, EventKind.ASSISTANT_TEXT)


def test_a_storage_zip_over_the_limit_is_refused_naming_it(storage):
    with pytest.raises(ArchiveError, match=r"opencode\.zip"):
        parse_bytes(zipped(storage), "opencode.zip", limits=ArchiveLimits(max_total_bytes=4096))


def test_fields_of_any_type_parse_or_are_refused_cleanly(storage):
    # every file of the folder mangled, zipped and uploaded
    read = fuzz(storage, rounds=15, seed=15, check=lambda t: None)
    assert read > 5  # not a vacuous test: many still parse
    rng = random.Random(15)
    text = json.dumps(export_document())
    for _ in range(40):
        parse_or_refuse(mutated_document(text, rng), "export.json")


def test_payloads_in_every_field_stay_text_on_the_page():
    transcript = parse_bytes(json.dumps(with_payloads(export_document())).encode(), "export.json")
    assert carries_payloads(json.dumps(transcript.to_dict(), default=str))
    assert_payloads_stay_text(transcript)
