"""Secrets are replaced by [REDACTED]; redacted JSON lines stay valid JSON."""

from __future__ import annotations

import json

import pytest

from transcript_formats.redact import MARKER, redact_bytes, redact_text

SECRETS = [
    ("anthropic key", "sk-ant-api03-" + "A1b2" * 20, ""),
    ("openai project key", "sk-proj-" + "Zx9_" * 12, ""),
    ("openai key", "sk-" + "q" * 48, ""),
    ("google api key", "AIza" + "SyD-9x" * 5 + "abcde", ""),
    ("github token", "ghp_" + "a1B2" * 9, ""),
    ("github fine-grained token", "github_pat_" + "11ABCDEFG0" * 4, ""),
    ("aws access key id", "AKIAIOSFODNN7EXAMPLE", ""),
    ("hugging face token", "hf_" + "aBcD" * 9, ""),
    ("slack bot token", "xoxb-123456789012-abcdefghij", ""),
]
ASSIGNMENTS = [
    ("env password", "DB_PASSWORD=hunter2hunter", "DB_PASSWORD="),
    ("yaml password", "PASSWORD: correct-horse", "PASSWORD: "),
    ("token variable", "GITHUB_TOKEN=abc123xyz", "GITHUB_TOKEN="),
    ("secret variable", "CLIENT_SECRET=s3cr3tvalue", "CLIENT_SECRET="),
    (
        "key variable",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
        "AWS_SECRET_ACCESS_KEY=",
    ),
    (
        "bearer header",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload",
        "Authorization: Bearer ",
    ),
    ("api key header", "x-api-key: k-1234567890abcdef", "x-api-key: "),
    ("quoted password", 'password = "open sesame"', 'password = "'),
]


@pytest.mark.parametrize(("label", "secret", "_"), SECRETS, ids=[s[0] for s in SECRETS])
def test_key_shapes_are_redacted_in_prose_and_after_a_json_newline_escape(label, secret, _):
    assert redact_text(f"the key is {secret}.") == f"the key is {MARKER}."
    line = json.dumps({"output": f"env:\n{secret}\ndone"})
    redacted = redact_text(line)
    assert secret not in redacted
    assert json.loads(redacted) == {"output": f"env:\n{MARKER}\ndone"}


@pytest.mark.parametrize(("label", "text", "kept"), ASSIGNMENTS, ids=[a[0] for a in ASSIGNMENTS])
def test_secret_assignments_keep_the_name_and_lose_the_value(label, text, kept):
    redacted = redact_text(text)
    assert redacted.startswith(kept + MARKER)
    value = text[len(kept) :].split()[0].strip('"')
    assert value not in redacted
    line = json.dumps({"env": f"PATH=/bin\n{text}\nHOME=/root"})
    decoded = json.loads(redact_text(line))
    assert MARKER in decoded["env"] and value not in decoded["env"]


def test_private_key_blocks_are_redacted_whole():
    block = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\nAAAA+/==\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    line = json.dumps({"text": f"cat id\n{block}\nok"})
    assert json.loads(redact_text(line)) == {"text": f"cat id\n{MARKER}\nok"}


def test_ordinary_log_text_is_left_alone():
    text = json.dumps(
        {
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 900},
            "text": "max_tokens=4096; task-sk-notakey; the token budget; KEY POINTS",
        }
    )
    assert redact_text(text) == text


def test_redacting_twice_changes_nothing_more():
    once = redact_text("DB_PASSWORD=hunter2 and sk-" + "x" * 40)
    assert redact_text(once) == once


def test_bytes_that_are_not_utf8_pass_through():
    data = b"\xff\xfe GITHUB_TOKEN=abcdef123 \x80"
    assert redact_bytes(data) == b"\xff\xfe GITHUB_TOKEN=[REDACTED] \x80"


def test_every_secret_name_ending_is_found_through_its_scan():
    from transcript_formats.redact import _SECRET_NAME_ENDINGS

    for ending in _SECRET_NAME_ENDINGS:
        name = "MY_" + ending.decode()
        assert redact_text(f"{name}=hunter2-value ok") == f"{name}={MARKER} ok", name


def test_key_shapes_inside_base64_image_data_are_left_alone():
    import base64

    blob = base64.b64encode(bytes(range(256)) * 4).decode()
    line = json.dumps({"data": blob[:200] + "/AKIAABCDEFGHIJKLMNOP" + blob[200:]})
    assert redact_text(line) == line
    assert redact_text('aws "AKIAABCDEFGHIJKLMNOP"') == f'aws "{MARKER}"'
    assert redact_text("token ghp_" + "a" * 36 + " and github_pat_" + "b" * 22) == (
        f"token {MARKER} and {MARKER}"
    )
