"""The renderer on transcripts built directly from the schema."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.transcripts.render.injection import PAYLOADS, hostile_context, hostile_transcript
from transcript_formats.schema import Event, EventKind, Thread, Transcript, Turn, Usage
from transcript_render import RunContext, export_html, render_transcript
from transcript_render.csp import source_hash
from transcript_render.document import CHUNK_EVENTS
from transcript_render.view import MAX_DEPTH

ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "div", "h1", "h2", "a", "section", "span",
    "ul", "li", "code", "details", "summary", "template", "nav", "button", "input", "article",
    "pre", "p", "script",
    # Markdown (markdown.py), the outline's turn numbers, images (data: URLs only).
    "b", "strong", "em", "s", "h3", "h4", "h5", "h6", "ol", "blockquote", "hr", "br", "table",
    "thead", "tbody", "tr", "th", "td", "img",
}  # fmt: skip


class Elements(HTMLParser):
    """Every start tag with its attributes, template contents included (the parser reads them)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)

    def handle_endtag(self, tag):
        self._in = None


def elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


def event(kind: EventKind, id: str, **fields) -> Event:
    return Event(id=id, kind=kind, **fields)


def transcript(*events: Event, threads: list[Thread] | None = None, **fields) -> Transcript:
    main = Thread(id="main", turns=[Turn(index=1, events=list(events), usage=Usage(5, 7, 11, 13))])
    return Transcript(format="test", threads=[main, *(threads or [])], **fields)


def test_hostile_text_in_every_field_stays_text():
    html = export_html(hostile_transcript(), context=hostile_context(PAYLOADS[0]))
    found = elements(html)
    tags = {tag for tag, _ in found.tags}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS
    assert len(found.scripts) == 1 and len(found.styles) == 1
    assert sum(tag == "script" for tag, _ in found.tags) == 1
    for tag, attrs in found.tags:
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        assert "style" not in attrs, (tag, attrs)
        for name in ("href", "src", "action"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("javascript:", "http:", "https:", "//")), (tag, attrs)
    for payload in PAYLOADS:
        if "<" in payload:
            assert payload not in html


def test_payloads_cover_at_least_thirty_attacks():
    assert len(set(PAYLOADS)) >= 30


def test_csp_allows_exactly_the_inline_script_and_style_by_hash():
    rendered = render_transcript(transcript(event(EventKind.USER_TEXT, "u", text="hi")))
    found = elements(rendered.html)
    assert f"script-src {source_hash(found.scripts[0])}" in rendered.csp
    assert f"style-src {source_hash(found.styles[0])}" in rendered.csp
    assert "default-src 'none'" in rendered.csp and "connect-src 'none'" in rendered.csp
    assert "unsafe-inline" not in rendered.csp and "unsafe-eval" not in rendered.csp
    assert "frame-ancestors 'none'" in rendered.csp
    assert 'http-equiv="Content-Security-Policy"' not in rendered.html


def test_export_carries_its_policy_in_a_meta_element_and_names_no_other_origin():
    html = export_html(
        transcript(event(EventKind.USER_TEXT, "u", text="hi")),
        context=RunContext(run_url="/runs/1/", download_url="/runs/1/transcript/export"),
    )
    meta = [a for t, a in elements(html).tags if t == "meta" and a.get("http-equiv")]
    assert meta[0]["http-equiv"] == "Content-Security-Policy"
    assert "connect-src 'none'" in meta[0]["content"]
    assert "frame-ancestors" not in meta[0]["content"]  # a <meta> policy cannot carry it
    assert "/runs/1/" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)


def test_file_change_renders_a_highlighted_unified_diff_with_counts():
    diff = "--- a/k.py\n+++ b/k.py\n@@ -1,2 +1,2 @@\n-old = 1\n+new = 2\n same\n"
    html = export_html(transcript(event(EventKind.FILE_CHANGE, "f", path="k.py", diff=diff)))
    assert '<span class="gd">-old = 1</span>' in html
    assert '<span class="gi">+new = 2</span>' in html
    assert '<span class="stat-add">+1</span>' in html
    assert '<span class="stat-del">&minus;1</span>' in html


def test_tool_arguments_are_pretty_json_highlighted():
    call = event(EventKind.TOOL_CALL, "c", tool_name="Bash", arguments={"command": "ls -la"})
    html = export_html(transcript(call))
    assert '<span class="nt">"command"</span>' in html
    assert '<span class="s2">"ls -la"</span>' in html
    assert "command=ls -la" in html  # the one-line preview in the summary


def test_reasoning_is_collapsed_in_an_inert_template_with_its_length():
    html = export_html(transcript(event(EventKind.REASONING, "r", text="x" * 1234)))
    assert "Reasoning &middot; 1,234 characters" in html
    assert re.search(
        r'<template class="lazy"><pre class="txt prose">x{1234}</pre></template>', html
    )


def test_long_result_shows_its_head_and_keeps_the_rest_one_click_away():
    text = "\n".join(f"line {i}" for i in range(500))
    html = export_html(transcript(event(EventKind.TOOL_RESULT, "t", text=text)))
    assert '<pre class="txt head ns ">line 0\n' in html
    head = html.split('<pre class="txt head ns ">', 1)[1].split("</pre>", 1)[0]
    assert "line 499" not in head
    assert "Show all (" in html and "line 499" in html


def test_every_event_has_an_anchor_with_a_link_to_it():
    events = [event(EventKind.USER_TEXT, f"ev {i}/x", text="t") for i in range(3)]
    html = export_html(transcript(*events))
    for i in range(3):
        assert f'id="e-ev {i}/x"' in html
        assert f'href="#e-ev%20{i}%2Fx"' in html


def test_errors_and_unknown_records_are_marked():
    html = export_html(
        transcript(
            event(EventKind.TOOL_RESULT, "bad", text="boom", is_error=True),
            event(EventKind.UNKNOWN, "u", raw_type="mystery", raw={"type": "mystery", "n": 3}),
            event(EventKind.COMPACTION, "k", text="summary of earlier turns"),
        )
    )
    assert 'class="ev k-tool_result err"' in html
    assert re.search(
        r'class="ev k-unknown".*?<summary>mystery</summary><template class="lazy">', html, re.S
    )
    assert "context compacted" in html


def nested_chain(depth: int) -> Transcript:
    threads = []
    parent_event = "spawn0"
    for level in range(1, depth + 1):
        spawn = event(EventKind.SUBAGENT_SPAWN, f"spawn{level}", text=f"level {level}")
        threads.append(
            Thread(
                id=f"t{level}",
                kind="subagent",
                title=f"agent at depth {level}",
                parent_event=parent_event,
                turns=[Turn(index=1, events=[spawn])],
            )
        )
        parent_event = f"spawn{level}"
    return transcript(event(EventKind.SUBAGENT_SPAWN, "spawn0", text="start"), threads=threads)


def test_subagents_nest_under_their_spawning_event_at_any_depth():
    html = export_html(nested_chain(12))
    # Each level sits inside the previous level's inert template: count the nesting directly.
    position = 0
    for level in range(1, 13):
        position = html.index(f"Subagent &middot; agent at depth {level}", position)
    opened = html.count('<details class="fold sub"')
    assert opened == 12
    inner = html.split("agent at depth 12", 1)[0]
    assert inner.count("<template") - inner.count("</template>") >= 11


def test_a_cycle_or_an_absurd_depth_is_cut_off_with_a_notice():
    html = export_html(nested_chain(MAX_DEPTH + 5))
    assert f"deeper than {MAX_DEPTH} levels" in html
    assert f"agent at depth {MAX_DEPTH + 1}" in html  # shown as an orphan, not lost
    cycle = transcript(
        event(EventKind.SUBAGENT_SPAWN, "s", child_thread="a"),
        threads=[
            Thread(
                id="a",
                kind="subagent",
                parent_event="s",
                turns=[
                    Turn(index=1, events=[event(EventKind.SUBAGENT_SPAWN, "s2", child_thread="a")])
                ],
            )
        ],
    )
    assert "a cycle" in export_html(cycle)


def test_long_timelines_keep_later_chunks_in_inert_templates():
    turns = [
        Turn(index=i, events=[event(EventKind.TOOL_RESULT, f"e{i}", text=f"out {i}")])
        for i in range(1, 1001)
    ]
    html = export_html(Transcript(format="test", threads=[Thread(id="main", turns=turns)]))
    assert (
        html.count('<div class="chunk" data-chunk><template class="lazy">') == 1000 // CHUNK_EVENTS
    )
    live = html.split('<div class="chunk"', 1)[0]
    assert 'id="e-e1"' in live and 'id="e-e151"' not in live


def test_summary_cards_show_usage_cost_and_run_context():
    html = export_html(
        transcript(
            event(EventKind.TOOL_CALL, "c", tool_name="Read"),
            cost_usd=1.25,
            cost_computed=True,
            duration_s=125,
            model="claude-x",
        ),
        context=RunContext(
            agent="Claude Code",
            task="softmax",
            verdict="passed",
            reward=0.75,
            solution="class ModelNew: pass",
            grader_log="compile ok",
        ),
    )
    for text in [
        "Claude Code",
        "softmax",
        "claude-x",
        "passed",
        "reward 0.750",
        "2 min 05 s",
        "$1.2500",
        ">computed<",
        ">7<",
        ">11<",
        ">13<",
        "compile ok",
    ]:
        assert text in html, text
    assert '<span class="k">class</span>' in html  # the solution, highlighted
    assert "in 5 &middot; out 7 &middot; cr 11 &middot; cw 13" in html  # the turn's token badge


@pytest.mark.parametrize("kind", list(EventKind))
def test_every_event_kind_renders_with_empty_fields(kind):
    html = export_html(transcript(Event(id="only", kind=kind)))
    assert 'id="e-only"' in html
