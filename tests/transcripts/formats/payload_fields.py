"""A log with a script payload in every string it holds, for the Copilot CLI, OpenCode and Droid
reader tests (hostile_logs.py checks the page that results)."""

from __future__ import annotations

import json
from typing import Any

from tests.transcripts.render.injection import PAYLOADS

# Fields whose value decides how a record is read or joined; every other string gets a payload.
KEEP = frozenset({"type", "role", "status", "subtype", "id", "sessionID", "messageID", "callID"})
KEEP |= {"toolCallId", "tool_use_id", "apiCallId", "agentId", "parentID"}


def with_payloads(value: Any, counter: list[int] | None = None) -> Any:
    """Every string leaf outside KEEP prefixed with the next payload, in turn."""
    counter = counter if counter is not None else [0]
    if isinstance(value, dict):
        return {
            key: item if key in KEEP else with_payloads(item, counter)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [with_payloads(item, counter) for item in value]
    if isinstance(value, str):
        counter[0] += 1
        return f"{PAYLOADS[counter[0] % len(PAYLOADS)]}{value}"
    return value


def lines_with_payloads(data: bytes) -> bytes:
    """A JSON-lines log with payloads in every field (lines that are no JSON left out)."""
    counter = [0]
    out = []
    for line in data.splitlines():
        try:
            out.append(json.dumps(with_payloads(json.loads(line), counter)).encode())
        except ValueError:
            continue
    return b"\n".join(out) + b"\n"


def carries_payloads(transcript_json: str) -> bool:
    return any(payload in transcript_json for payload in PAYLOADS if "<" in payload)
