"""Diff lines take the classes Pygments' DiffLexer gives them, and every character is escaped."""

import html
import random
import re

import pytest
from markupsafe import Markup
from pygments.lexers import DiffLexer
from pygments.token import STANDARD_TYPES, Whitespace

from transcript_render.highlight import diff_line_class, diff_to_html

DIFFS = [
    "--- a/k.py\n+++ b/k.py\n@@ -1,3 +1,3 @@\n import triton\n-x = 1\n+x = 2\n y = 3\n",
    "diff --git a/x b/x\nindex 83db48f..bf269f4 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    "\\ No newline at end of file\n",
    "\n\n@@ -0,0 +1,2 @@\n+<script>alert(1)</script>\n+&amp; \"q\" 'a'\n\n",
    "Index: f\n" + "=" * 67 + "\n---\n!x\n< old\n> new\n",
    "3,4c3,4\n< a\n---\n> b\n5a6\n> c\n12d11\n",
    "\ufeff--- a\r\n+++ b\r\n@@ -1 +1 @@\r\n-\tx\r\n+\ty\r",
    "plain text\n  indented\n\tTabbed\n@\n=\n1a\n",
]


def lexer_classes(diff: str) -> list[str]:
    """The class DiffLexer gives each line's text (its first token that is not whitespace)."""
    classes, current = [], None
    for ttype, value in DiffLexer().get_tokens(diff):
        if ttype is not Whitespace and current is None:
            current = STANDARD_TYPES.get(ttype, "")
        if value.endswith("\n"):
            classes.append(current or "")
            current = None
    return classes


def our_lines(diff: str) -> list[tuple[str, str]]:
    """(class, text) of each line of diff_to_html's block."""
    body = str(diff_to_html(diff)).removeprefix('<div class="hl"><pre>')
    body = body.removesuffix("</pre></div>")
    lines = []
    for line in body.split("\n")[:-1]:
        found = re.fullmatch(r'<span class="(\w+)">(.*)</span>', line)
        css, text = (found.group(1), found.group(2)) if found else ("", line)
        lines.append((css, html.unescape(text)))
    return lines


def check(diff: str) -> None:
    ours = our_lines(diff)
    assert [css for css, _ in ours] == lexer_classes(diff), repr(diff)
    prepared = diff.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    assert [text for _, text in ours] == prepared.split("\n"), repr(diff)


@pytest.mark.parametrize("diff", DIFFS)
def test_each_line_has_the_lexers_class_and_its_text(diff):
    check(diff)


def test_the_same_classes_on_random_diff_like_text():
    rng = random.Random(5)
    starts = [" ", "-", "+", "@@ ", "< ", "> ", "!", "---", "diff ", "index ", "=", "1,2c3", "x"]
    for _ in range(300):
        lines = [
            rng.choice(starts)
            + "".join(rng.choice("ab <>&\"'\t\\") for _ in range(rng.randint(0, 8)))
            for _ in range(rng.randint(1, 12))
        ]
        check("\n".join(lines) + rng.choice(["", "\n", "\n\n", "\r\n"]))


def test_every_character_is_escaped():
    block = diff_to_html("+<img src=x onerror=alert(1)>\n-</pre><script>x</script>\n")
    assert isinstance(block, Markup) and "<img" not in block and "<script" not in block
    assert "&lt;img" in block and diff_line_class("+x") == "gi"


def test_json_blocks_keep_the_lexers_text_and_escape_it():
    from pygments.lexers import JsonLexer

    from transcript_render.highlight import json_to_html

    value = {"cmd": "pytest -k '<x>' && echo \"ok\"", "n": [1, 2.5, None, True], "e": {}, "k": []}
    block = str(json_to_html(value))
    text = html.unescape(re.sub(r"<[^>]+>", "", block))
    import json

    assert text == json.dumps(value, indent=2, ensure_ascii=False)
    assert "&lt;x&gt;" in block and "<x>" not in block
    # Every string is a JsonLexer string, every key a JsonLexer name tag.
    kinds = {STANDARD_TYPES.get(t) for t, v in JsonLexer().get_tokens(text) if v.strip()}
    assert {"s2", "nt", "kc", "p"} <= kinds
    assert (
        '<span class="nt">&#34;cmd&#34;</span>' in block or '<span class="nt">"cmd"</span>' in block
    )
