"""Markdown in user and assistant text: the constructs people write, and no HTML from the log."""

from __future__ import annotations

import random
import time

import pytest

from tests.transcripts.render.injection import PAYLOADS
from tests.transcripts.render.test_render import elements
from transcript_render.markdown import (
    _MARKUP,
    LINK_REL,
    MAX_MARKDOWN_CHARS,
    _parser,
    markdown_to_html,
    plain_paragraphs,
)

# What Markdown may produce; anything else would have come from the text itself.
MARKDOWN_TAGS = {
    "div", "p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "code", "pre", "span", "a", "strong",
    "em", "s", "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def html(text: str) -> str:
    return str(markdown_to_html(text))


def test_headings_drop_below_the_page_headings():
    out = html("# Title\n\n## Plan\n\n###### deep")
    assert "<h3>Title</h3>" in out and "<h4>Plan</h4>" in out and "<h6>deep</h6>" in out
    assert "<h1" not in out and "<h2" not in out


def test_lists_emphasis_inline_code_and_tables():
    out = html(
        "1. Read `kernel.py`\n2. **Tune** *it*\n\n- a\n- b ~~no~~\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |"
    )
    assert "<ol>\n<li>Read <code>kernel.py</code></li>" in out
    assert "<strong>Tune</strong> <em>it</em>" in out
    assert "<ul>\n<li>a</li>\n<li>b <s>no</s></li>" in out
    assert "<th>a</th>" in out and "<td>2</td>" in out


def test_code_fences_are_highlighted_by_their_language_and_escaped():
    out = html('```python\nx = "<b>"\n```\n\n```nosuchlanguage\n<i>raw</i>\n```')
    assert '<div class="hl"><pre><span class="n">x</span>' in out
    assert '<span class="s2">"&lt;b&gt;"</span>' in out
    assert '<div class="hl"><pre>&lt;i&gt;raw&lt;/i&gt;\n</pre></div>' in out


def test_a_hostile_fence_language_is_never_an_attribute():
    out = html('```"><script>alert(1)</script>\nx\n```')
    assert "<script" not in out
    assert 'class="language' not in out


def test_links_keep_only_web_and_mail_targets_and_get_rel():
    out = html(
        "[docs](https://example.org/a?b=1) [mail](mailto:a@example.org) <https://x.example>"
        " [js](javascript:alert(1)) [data](data:text/html,x) [rel](/runs/1) [vb](vbscript:x)"
        " [ent](&#106;avascript:alert(1)) [sp]( javascript:alert(1))"
    )
    hrefs = [attrs for tag, attrs in elements(out).tags if tag == "a"]
    assert [a["href"] for a in hrefs] == [
        "https://example.org/a?b=1",
        "mailto:a@example.org",
        "https://x.example",
    ]
    assert all(a["rel"] == LINK_REL for a in hrefs)
    assert "[js](javascript:alert(1))" in out  # left as the text it was


def test_markdown_images_are_never_fetched():
    out = html("![chart](https://evil.example/p.png) ![x](data:image/png;base64,AAAA)")
    assert "<img" not in out
    assert 'href="https://evil.example/p.png"' in out  # a link the reader may follow


def test_raw_html_is_text():
    out = html('<b>bold</b> <div onclick="x()">d</div>\n\n<script>alert(1)</script>')
    assert "&lt;b&gt;bold&lt;/b&gt;" in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "<b>" not in out and "<script" not in out


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_payload_makes_markup_of_its_own(payload):
    for text in (payload, f"# {payload}\n\n- {payload}\n\n`{payload}`\n\n> {payload}"):
        found = elements(html(text))
        assert {tag for tag, _ in found.tags} <= MARKDOWN_TAGS
        for tag, attrs in found.tags:
            assert set(attrs) <= {"class", "href", "rel"}, (tag, attrs)
            assert not (attrs.get("href") or "https://").lower().startswith("javascript")


def test_plain_text_takes_the_fast_path_with_the_same_html():
    rng = random.Random(15)
    alphabet = [*"abc xyz_01 \n\"'.,:;?()/%$^{}=+-\u00e9\u00a0\u2028\u3000", "\n\n", "  \n"]
    checked = 0
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        if _MARKUP.search(text) is None:
            checked += 1
            assert plain_paragraphs(text) == _parser().render(text), repr(text)
    assert checked > 500


def test_identifiers_with_underscores_stay_on_the_fast_path():
    assert _MARKUP.search("set program_id and BLOCK_SIZE") is None
    assert _MARKUP.search("an _emphasis_ here") is not None


def test_text_past_the_cap_is_plain():
    out = html("# x\n" + "y" * MAX_MARKDOWN_CHARS)
    assert out.startswith('<pre class="txt">') and "<h3>" not in out


@pytest.mark.parametrize(
    "text",
    [
        "[" * 20_000,
        "*a" * 10_000,
        "[a](" * 5_000,
        "_a" * 10_000,
        "&#" * 10_000,
        "> " * 10_000 + "x",
        "- " * 10_000 + "x",
        "`" * 20_000,
        "<" * 20_000,
        "|a" * 10_000 + "\n" + "|-" * 10_000,
    ],
)
def test_pathological_input_renders_in_bounded_time(text):
    start = time.process_time()
    out = html(text)
    assert time.process_time() - start < 2.0  # linear: about 15 us a character at worst
    tags = {tag for tag, _ in elements(out).tags}
    assert tags <= MARKDOWN_TAGS
