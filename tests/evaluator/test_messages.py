"""Every message a grader child sends is declared in grader/messages.py, with the role that sends
it: the one place a reader looks them up."""

import re
from pathlib import Path

from grader.messages import MESSAGES

GRADER = Path(__file__).resolve().parents[2] / "grader"


def test_every_event_a_child_sends_is_declared():
    sent = set()
    for path in GRADER.rglob("*.py"):
        sent |= set(re.findall(r'channel\.send\(\s*"([a-z_]+)"', path.read_text()))
    assert sent, "no channel.send found: the pattern no longer matches the code"
    assert sent - set(MESSAGES) == set()
