"""ANSI escape codes in tool output: colours become our classes, every other code disappears."""

from __future__ import annotations

import re

import pytest

from tests.transcripts.render.injection import PAYLOADS
from tests.transcripts.render.test_render import elements
from transcript_render.ansi import ansi_to_html, has_escapes, strip_ansi

CLASS = re.compile(r"a-(?:f|b)(?:[0-9]|1[0-5])|a-bold|a-dim|a-it|a-ul")


def html(text: str) -> str:
    return str(ansi_to_html(text))


def test_colours_and_weights_become_classes():
    out = html("\x1b[32m3 passed\x1b[0m, \x1b[1;31m1 failed\x1b[0m")
    assert out == ('<span class="a-f2">3 passed</span>, <span class="a-f1 a-bold">1 failed</span>')


def test_bright_background_and_reset_of_one_attribute():
    out = html("\x1b[93;44mwarn\x1b[39m blue only\x1b[49m plain")
    assert out == ('<span class="a-f11 a-b4">warn</span><span class="a-b4"> blue only</span> plain')


def test_256_and_true_colours_map_to_the_basic_sixteen():
    assert html("\x1b[38;5;9mx") == '<span class="a-f9">x</span>'
    assert html("\x1b[38;5;196mx") == '<span class="a-f9">x</span>'  # cube red
    assert html("\x1b[38;2;0;128;0mx") == '<span class="a-f2">x</span>'
    assert html("\x1b[48;5;240mx") == '<span class="a-b8">x</span>'  # grey ramp


def test_cursor_moves_titles_and_hyperlinks_are_dropped_keeping_their_text():
    text = (
        "\x1b[2K\x1b[1Gdone\x1b]0;title\x07 \x1b]8;;https://example.org\x1b\\link\x1b]8;;\x1b\\"
        " \x1b[?25l\x1b(B\x1b=ok\x9b1m"
    )
    assert html(text) == "done link ok"
    assert strip_ansi(text) == "done link ok"


def test_text_is_escaped_around_the_codes():
    out = html("\x1b[31m<script>alert(1)</script>\x1b[0m & <b>")
    assert out == '<span class="a-f1">&lt;script&gt;alert(1)&lt;/script&gt;</span> &amp; &lt;b&gt;'


def test_broken_and_unterminated_sequences_never_show_an_escape():
    for text in ["\x1b[", "\x1b[31", "x\x1b", "\x1b]8;;http://x", "\x1b[999999999999m", "\x1b[;;m"]:
        out = html(text)
        assert "\x1b" not in out and "\x9b" not in out


def test_control_characters_are_removed_but_newlines_and_tabs_kept():
    assert html("a\x00b\x08c\td\ne\r\n") == "abc\td\ne\r\n"


def test_has_escapes():
    assert has_escapes("\x1b[0m") and not has_escapes("plain")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_inside_colours_stay_text(payload):
    found = elements(html(f"\x1b[1;35m{payload}\x1b[0m{payload}\x1b[4m"))
    for tag, attrs in found.tags:
        assert tag == "span" and set(attrs) == {"class"}
        assert all(CLASS.fullmatch(name) for name in (attrs["class"] or "").split())
