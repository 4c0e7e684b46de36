"""The page's title, outline, command and output rendering, on hand-written transcripts."""

from __future__ import annotations

import re

from tests.transcripts.render.injection import PAYLOADS
from tests.transcripts.render.samples import COMMAND_MESSAGE, NO_NEWLINE_DIFF, showcase
from tests.transcripts.render.test_render import elements
from transcript_formats.schema import Event, EventKind, Thread, Transcript, Turn
from transcript_render import RunContext, export_html
from transcript_render.document import OUTLINE_CHUNK_TURNS
from transcript_render.view import TITLE_CHARS, build_view, first_prompt, outline


def one_turn(*events: Event) -> Transcript:
    return Transcript(format="test", threads=[Thread(id="main", turns=[Turn(1, list(events))])])


def title_of(html: str) -> str:
    return re.search(r"<title>(.*?)</title>", html, re.S).group(1)


def test_the_title_is_the_first_prompt_trimmed_with_the_run_under_it():
    prompt = "  Optimise   the *softmax*\n kernel.\n[image]\n" + "and more words " * 20
    html = export_html(
        showcase(first_prompt=prompt), context=RunContext(agent="Claude Code", task="softmax")
    )
    heading = re.search(r"<h1>(.*?)</h1>", html).group(1)
    assert heading.startswith("Optimise the softmax kernel. and more words")
    assert heading.endswith("\u2026") and len(heading) <= TITLE_CHARS
    assert '<p class="subtitle">Claude Code on softmax</p>' in html
    assert title_of(html) == f"{heading} &middot; Claude Code on softmax"


def test_the_title_of_a_hostile_prompt_is_escaped():
    for payload in PAYLOADS:
        html = export_html(one_turn(Event("u", EventKind.USER_TEXT, text=payload)))
        assert "<script" not in title_of(html).lower()
        assert sum(tag == "script" for tag, _ in elements(html).tags) == 1


def test_a_command_prompt_titles_the_page_as_the_command():
    transcript = one_turn(Event("u", EventKind.USER_TEXT, text=COMMAND_MESSAGE))
    assert first_prompt(transcript) == "/model opus"


def test_without_a_prompt_the_given_title_stands():
    html = export_html(one_turn(Event("a", EventKind.ASSISTANT_TEXT, text="hi")), title="Run #3")
    assert title_of(html) == "Run #3" and "<h1>Run #3</h1>" in html


def test_the_outline_lists_every_turn_with_its_words_or_tools():
    transcript = showcase(2)
    transcript.main.turns.append(
        Turn(
            99,
            [
                Event("c1", EventKind.TOOL_CALL, tool_name="Read"),
                Event("c2", EventKind.TOOL_CALL, tool_name="Bash"),
                Event("c3", EventKind.TOOL_CALL, tool_name="Read"),
            ],
        )
    )
    entries = outline(build_view(transcript).main)
    assert [(e.turn.turn.index, e.kind, e.words) for e in entries] == [
        (1, "user", "Make the softmax kernel faster"),
        (2, "user", "/model opus"),
        (3, "user", "Set model to opus"),
        (
            4,
            "assistant",
            "Plan 1. Read kernel.py 2. Tune the block size, see [the docs](https:/\u2026",
        ),
        (5, "assistant", "Step 5: measured the kernel again"),
        (6, "assistant", "Step 6: measured the kernel again"),
        (99, "tools", "Read, Bash"),
    ]
    html = export_html(transcript)
    assert '<a href="#t-main-99" class="otl otl-tools"><b>99</b> Read, Bash</a>' in html


def test_a_long_outline_comes_in_inert_chunks():
    html = export_html(showcase(OUTLINE_CHUNK_TURNS * 2))
    nav = html.split('<nav aria-label="Turns" id="outline-list">', 1)[1].split("</nav>", 1)[0]
    live = nav.split('<div class="ochunk"', 1)[0]
    assert live.count('class="otl ') == OUTLINE_CHUNK_TURNS
    assert nav.count('<div class="ochunk" data-ochunk><template class="outline-lazy">') == 2


def test_commands_and_ansi_output_are_drawn_not_shown_raw():
    html = export_html(showcase())
    assert "&lt;command-name&gt;" not in html and "\x1b" not in html
    assert '<span class="kind ns">command</span>' in html
    assert '<div class="cmd"><code>/model opus</code></div>' in html
    assert '<span class="a-f2">3 passed</span>' in html


def test_markdown_replies_are_rendered_and_prompts_too():
    html = export_html(showcase())
    assert "<h4>Plan</h4>" in html
    assert "Make the <em>softmax</em> kernel faster" in html
    assert 'rel="nofollow noopener noreferrer"' in html


def test_a_diff_with_no_newline_markers_is_shown_with_its_counts():
    html = export_html(
        one_turn(Event("f", EventKind.FILE_CHANGE, path="k.py", diff=NO_NEWLINE_DIFF))
    )
    assert '<span class="stat-add">+1</span> <span class="stat-del">&minus;1</span>' in html
    assert "No newline at end of file" in html


def with_subagent() -> Transcript:
    k = EventKind
    spawn = Event("task", k.TOOL_CALL, tool_name="Task")
    main = Thread(
        id="main",
        turns=[
            Turn(1, [Event("u", k.USER_TEXT, text="go")]),
            Turn(2, [Event("r", k.REASONING, text="hm"), spawn]),
            Turn(3, [Event("n", k.SYSTEM_NOTICE, text="resumed")]),
        ],
    )
    sub = Thread(
        id="sub",
        kind="subagent",
        parent_event="task",
        turns=[Turn(1, [Event("s1", k.TOOL_RESULT, text="x")]), Turn(2, [])],
    )
    return Transcript(format="test", threads=[main, sub])


def test_the_card_and_the_outline_count_the_main_threads_turns():
    html = export_html(with_subagent())
    assert '<div class="v" id="turn-count">3 <span class="tag">+2 in subagents</span></div>' in html
    assert 'Outline &middot; <span id="outline-count">3</span> turns' in html
    assert html.count('class="otl ') == 3
    assert "&middot; 3 turns" in html  # the phone's digest


def test_the_filter_offers_the_kinds_the_log_holds_and_turns_name_theirs():
    html = export_html(with_subagent())
    chips = re.findall(r'data-kind="(\w+)" aria-pressed="true">([^<]+) <span class="n">(\d+)', html)
    assert chips == [
        ("user_text", "User", "1"),
        ("reasoning", "Reasoning", "1"),
        ("tool_call", "Tool calls", "1"),
        ("tool_result", "Tool results", "1"),
        ("subagent", "Subagents", "1"),
    ]
    assert 'id="t-main-2" data-k="reasoning subagent tool_call" data-o="1"' in html
    assert 'id="t-main-3" data-k="other" data-o="2"' in html
    assert 'id="t-sub-1" data-k="tool_result">' in html  # a subagent's turn has no outline line
    assert 'class="ev k-tool_call with-sub" id="e-task"' in html
