"""The exported transcript in real Chromium: hostile logs run nothing, nothing leaves the file."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.transcripts.render.injection import PAYLOADS, hostile_context, hostile_transcript
from transcript_formats.schema import Event, EventKind, Thread, Transcript, Turn
from transcript_render import export_html


@pytest.fixture
def offline_page(page):
    """The page with the network off and every request recorded (and refused unless a file)."""
    page.requests = []
    page.dialogs = []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))

    def route(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", route)
    page.context.set_offline(True)
    return page


def open_file(page, tmp_path, html: str, name: str = "run.html"):
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri())
    return path.as_uri()


def expand_everything(page):
    page.click("#expand-all")
    page.wait_for_function("document.querySelectorAll('template.lazy').length === 0")
    # Hover and focus everything once, so that a payload hooked on those events would fire.
    for selector in ["a", "button", "summary", "input"]:
        for handle in page.query_selector_all(selector)[:60]:
            handle.dispatch_event("mouseover")
            handle.dispatch_event("focus")


def assert_nothing_ran(page):
    assert page.evaluate("window.__pwned === undefined && window.parent.__pwned === undefined")
    assert page.dialogs == []


def test_injection_corpus_in_every_field_runs_nothing(offline_page, tmp_path):
    html = export_html(hostile_transcript(), context=hostile_context(PAYLOADS[3]))
    url = open_file(offline_page, tmp_path, html)
    expand_everything(offline_page)
    offline_page.fill("#search", "pwned")
    offline_page.press("#search", "Enter")
    for tab in ["solution", "grader", "timeline"]:
        offline_page.click(f"[data-tab={tab}]")
    offline_page.wait_for_timeout(300)
    assert_nothing_ran(offline_page)
    assert offline_page.js_errors == []
    assert offline_page.requests == [url]
    # The payloads are on the page as text, where a reader can see them.
    assert offline_page.locator("text=<svg onload=window.__pwned=1;alert(1)>").count() > 0


def test_escaping_alone_holds_without_the_content_security_policy(offline_page, tmp_path):
    html = export_html(hostile_transcript(), context=hostile_context(PAYLOADS[5]))
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html, count=1)
    assert "<meta http-equiv" not in html
    open_file(offline_page, tmp_path, html)
    expand_everything(offline_page)
    offline_page.wait_for_timeout(300)
    assert_nothing_ran(offline_page)


def test_the_export_makes_no_request_beyond_itself(offline_page, tmp_path):
    events = [Event(id=f"e{i}", kind=EventKind.TOOL_RESULT, text=f"out {i}") for i in range(2000)]
    turns = [Turn(index=i + 1, events=events[i * 4 : i * 4 + 4]) for i in range(500)]
    html = export_html(Transcript(format="test", threads=[Thread(id="main", turns=turns)]))
    url = open_file(offline_page, tmp_path, html)
    offline_page.mouse.wheel(0, 200_000)
    expand_everything(offline_page)
    assert offline_page.requests == [url]
    assert offline_page.js_errors == []


def test_a_folded_section_becomes_live_when_clicked(page, tmp_path):
    html = export_html(
        Transcript(
            format="test",
            threads=[
                Thread(
                    id="main",
                    turns=[
                        Turn(
                            index=1,
                            events=[Event(id="r", kind=EventKind.REASONING, text="deep thought")],
                        )
                    ],
                )
            ],
        )
    )
    open_file(page, tmp_path, html)
    assert page.locator("text=deep thought").count() == 0
    page.click("#e-r summary")
    expect(page.locator("#e-r pre", has_text="deep thought")).to_be_visible()


def nested_transcript() -> Transcript:
    spawn = Event(id="spawn", kind=EventKind.SUBAGENT_SPAWN, text="look around", child_thread="sub")
    inner = Event(id="needle", kind=EventKind.TOOL_RESULT, text="the quokka is here")
    chunked = [
        Turn(index=i, events=[Event(id=f"t{i}", kind=EventKind.ASSISTANT_TEXT, text=f"step {i}")])
        for i in range(2, 800)
    ]
    late = Turn(index=900, events=[Event(id="late", kind=EventKind.USER_TEXT, text="a QUOKKA too")])
    return Transcript(
        format="test",
        threads=[
            Thread(id="main", turns=[Turn(index=1, events=[spawn]), *chunked, late]),
            Thread(
                id="sub",
                kind="subagent",
                title="explorer",
                parent_event="spawn",
                turns=[Turn(index=1, events=[inner])],
            ),
        ],
    )


def test_search_opens_folds_and_steps_through_matches(page, tmp_path):
    open_file(page, tmp_path, export_html(nested_transcript()))
    assert page.locator("#e-needle").count() == 0  # inert until needed
    page.fill("#search", "quokka")
    page.press("#search", "Enter")
    expect(page.locator("#search-count")).to_have_text("1 / 2")
    expect(page.locator("#e-needle")).to_be_visible()
    assert "current" in page.get_attribute("#e-needle", "class")
    page.press("#search", "Enter")
    expect(page.locator("#search-count")).to_have_text("2 / 2")
    assert "current" in page.get_attribute("#e-late", "class")
    page.fill("#search", "no such words")
    page.press("#search", "Enter")
    expect(page.locator("#search-count")).to_have_text("no match")


def test_an_anchor_to_a_folded_event_opens_its_way_there(page, tmp_path):
    uri = open_file(page, tmp_path, export_html(nested_transcript()))
    page.goto(uri + "#e-needle")
    page.wait_for_selector("#e-needle.targeted")
    expect(page.locator("#e-needle")).to_be_visible()


def test_collapse_all_closes_what_expand_all_opened(page, tmp_path):
    open_file(page, tmp_path, export_html(nested_transcript()))
    page.click("#expand-all")
    expect(page.locator("#e-needle")).to_be_visible()
    page.click("#collapse-all")
    expect(page.locator("#e-needle")).not_to_be_visible()


def test_readable_on_a_phone(page, tmp_path):
    page.set_viewport_size({"width": 375, "height": 740})
    open_file(page, tmp_path, export_html(hostile_transcript(PAYLOADS[:3])))
    page.click("#expand-all")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0


def test_a_ten_thousand_event_run_starts_with_a_small_live_dom(page, tmp_path):
    turns = [
        Turn(
            index=i + 1,
            events=[
                Event(id=f"c{i}", kind=EventKind.TOOL_CALL, tool_name="Bash", arguments={"n": i}),
                Event(id=f"r{i}", kind=EventKind.TOOL_RESULT, text=f"result {i}\n" * 40),
                Event(id=f"t{i}", kind=EventKind.REASONING, text="thinking " * 50),
                Event(id=f"a{i}", kind=EventKind.ASSISTANT_TEXT, text=f"step {i}"),
            ],
        )
        for i in range(2500)
    ]
    html = export_html(Transcript(format="test", threads=[Thread(id="main", turns=turns)]))
    open_file(page, tmp_path, html)
    live_events = page.evaluate("document.querySelectorAll('[data-ev]').length")
    assert live_events <= 200
    assert page.evaluate("document.getElementsByTagName('*').length") < 3000
    # Scrolling instantiates the chunks that come near; the last event becomes reachable.
    for _ in range(40):
        page.mouse.wheel(0, 50_000)
        page.wait_for_timeout(30)
        if page.locator("#e-a2499").count():
            break
    assert page.locator("#e-a2499").count() == 1
    assert page.js_errors == []
    page.goto("about:blank")  # the kept screenshot of a page this long would not fit in memory


# -- what the page draws (issue 15): images, outline, deep links, search marks, widths ----------


def showcase_page(page, tmp_path, turns: int = 6, **fields):
    from tests.transcripts.render.samples import showcase

    transcript = showcase(turns)
    for name, value in fields.items():
        setattr(transcript, name, value)
    violations: list[str] = []
    page.on(
        "console", lambda m: violations.append(m.text) if "Content Security" in m.text else None
    )
    open_file(page, tmp_path, export_html(transcript))
    page.csp_violations = violations
    return page


BELOW_THE_BAR = """(selector) => {
    const el = document.querySelector(selector);
    const bar = document.querySelector('.toolbar').getBoundingClientRect();
    const box = el.getBoundingClientRect();
    return {top: box.top, bar: bar.bottom, height: window.innerHeight};
}"""


def assert_in_view_below_the_bar(page, selector):
    page.wait_for_timeout(200)  # the page settles lazy content above the target for a few frames
    where = page.evaluate(BELOW_THE_BAR, selector)
    assert where["bar"] - 1 <= where["top"] < where["height"] - 20, where


def test_images_are_embedded_as_data_urls_and_decoded(offline_page, tmp_path):
    url = showcase_page(offline_page, tmp_path).url
    image = offline_page.locator("#e-prompt img")
    expect(image).to_be_visible()
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    assert offline_page.evaluate("document.querySelector('#e-prompt img').naturalWidth") == 160
    assert offline_page.csp_violations == [] and offline_page.requests == [url]


def test_the_outline_jumps_to_a_turn_in_a_later_chunk(page, tmp_path):
    page.set_viewport_size({"width": 1400, "height": 900})
    showcase_page(page, tmp_path, turns=400)
    expect(page.locator("#outline")).to_have_attribute("open", "")
    assert page.locator("#t-main-180").count() == 0  # its chunk is still inert
    page.click('#outline-list a[href="#t-main-180"]')
    page.wait_for_selector("#t-main-180.targeted")
    assert_in_view_below_the_bar(page, "#t-main-180")
    assert page.js_errors == []


def test_the_outline_is_a_fold_on_a_phone_that_closes_after_a_jump(page, tmp_path):
    page.set_viewport_size({"width": 390, "height": 800})
    showcase_page(page, tmp_path, turns=60)
    outline = page.locator("#outline")
    assert outline.get_attribute("open") is None
    page.click("#outline > summary")
    page.click('#outline-list a[href="#t-main-50"]')
    page.wait_for_selector("#t-main-50.targeted")
    assert outline.get_attribute("open") is None
    assert_in_view_below_the_bar(page, "#t-main-50")


def test_a_deep_link_lands_in_view_below_the_sticky_search_bar(page, tmp_path):
    uri = open_file(page, tmp_path, export_html(nested_transcript()))
    for target in ["e-t600", "e-needle", "e-t3"]:  # a later chunk, a subagent fold, the first
        page.goto(f"{uri}#{target}")
        page.wait_for_selector(f"#{target}.targeted")
        assert_in_view_below_the_bar(page, f"#{target}")
    assert page.js_errors == []


def test_search_marks_the_matched_text_and_steps_through_it(page, tmp_path):
    showcase_page(page, tmp_path)
    page.fill("#search", "KERNEL")
    page.press("#search", "Enter")
    marks = page.locator("mark.sh")
    # "kernel" in the prompt, the Markdown reply, and six "measured the kernel again" turns.
    expect(page.locator("#search-count")).to_have_text("1 / 8")
    assert {text.lower() for text in marks.all_text_contents()} == {"kernel"}
    # The term is marked, not the whole event.
    assert page.evaluate("document.querySelector('mark.sh.current').textContent") == "kernel"
    expect(page.locator("mark.sh.current")).to_be_in_viewport()
    page.press("#search", "Shift+Enter")
    expect(page.locator("#search-count")).to_have_text("8 / 8")
    assert "step10" in page.evaluate(
        "document.querySelector('mark.sh.current').closest('[data-ev]').id"
    )
    page.click("#search-next")
    expect(page.locator("#search-count")).to_have_text("1 / 8")
    # A match inside folded tool arguments: its fold is flagged, and opened once shown.
    page.fill("#search", "pytest -q")
    page.press("#search", "Enter")
    expect(page.locator("#search-count")).to_have_text("1 / 2")
    expect(page.locator("mark.sh.current")).to_be_visible()
    page.fill("#search", "")
    page.press("#search", "Enter")
    assert page.locator("mark.sh").count() == 0
    assert page.locator("#e-reply h4").inner_text() == "Plan"  # the markup is whole again
    # The same search once everything is live DOM finds the same matches.
    page.click("#expand-all")
    page.fill("#search", "kernel")
    page.press("#search", "Enter")
    expect(page.locator("#search-count")).to_have_text("1 / 8")
    assert page.js_errors == []


def test_no_page_level_horizontal_scroll_at_desktop_and_phone_widths(page, tmp_path):
    from tests.transcripts.render.samples import showcase

    transcript = showcase(30)
    wide = "x" * 3000
    transcript.main.turns[3].events += [
        Event(
            "wide1",
            EventKind.ASSISTANT_TEXT,
            text=f"{wide}\n\n`{wide}`\n\n| {wide} | b |\n|-|-|\n| 1 | 2 |",
        ),
        Event("wide2", EventKind.ASSISTANT_TEXT, text=f"```python\n{wide} = 1\n```"),
        Event("wide3", EventKind.TOOL_RESULT, text="\x1b[31m" + wide),
        Event(
            "wide4",
            EventKind.USER_TEXT,
            text=f"<bash-input>{wide}</bash-input><bash-stdout>{wide}</bash-stdout>",
        ),
    ]
    path = tmp_path / "wide.html"
    path.write_text(export_html(transcript), encoding="utf-8")
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(path.as_uri())
        page.click("#expand-all")
        page.wait_for_function("document.querySelectorAll('template.lazy').length === 0")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (width, overflow)


def test_show_all_replaces_the_head_of_a_long_markdown_reply(page, tmp_path):
    items = "\n".join(f"- item **{i}**" for i in range(60))
    reply = Event("long", EventKind.ASSISTANT_TEXT, text=f"## Findings\n\n{items}")
    turns = [Turn(index=1, events=[reply])]
    open_file(
        page, tmp_path, export_html(Transcript(format="t", threads=[Thread("main", turns=turns)]))
    )
    expect(page.locator("#e-long .head h4")).to_have_text("Findings")
    assert page.locator("#e-long details.more li").count() == 0  # still inert
    page.click("#e-long details.more > summary")
    expect(page.locator("#e-long .head")).to_be_hidden()
    expect(page.locator("#e-long details.more li").nth(59)).to_be_visible()


# -- reading the page: tabs at every width, an outline that follows the scroll, the filter by
#    kind, one turn count, the summary folded on a phone ------------------------------------


def mixed_transcript(turns: int = 240) -> Transcript:
    """Turns of every filterable kind: a prompt, replies with tool calls and results, a turn of
    reasoning alone every third, and a tool call that spawned a subagent of two turns."""
    k = EventKind
    main_turns = []
    for i in range(1, turns + 1):
        if i % 3 == 0:
            events = [Event(f"r{i}", k.REASONING, text=f"thinking about step {i}")]
        else:
            events = [
                Event(f"a{i}", k.ASSISTANT_TEXT, text=f"Step {i}: timing the kernel"),
                Event(f"c{i}", k.TOOL_CALL, tool_name="Bash", arguments={"command": f"run {i}"}),
                Event(f"o{i}", k.TOOL_RESULT, text=f"result {i}"),
            ]
        main_turns.append(Turn(index=i, events=events))
    main_turns[0].events.insert(0, Event("u1", k.USER_TEXT, text="Make the kernel faster"))
    main_turns[1].events.append(
        Event("task", k.TOOL_CALL, tool_name="Task", arguments={"prompt": "look"})
    )
    sub = Thread(
        id="sub",
        kind="subagent",
        title="explorer",
        parent_event="task",
        turns=[
            Turn(1, [Event("s1", k.ASSISTANT_TEXT, text="the subagent looks")]),
            Turn(2, [Event("s2", k.TOOL_RESULT, text="what it found")]),
        ],
    )
    return Transcript(format="test", threads=[Thread(id="main", turns=main_turns), sub])


def mixed_page(page, tmp_path, width: int, **context):
    from transcript_render import RunContext

    page.set_viewport_size({"width": width, "height": 900})
    html = export_html(mixed_transcript(), context=RunContext(verdict="passed", **context))
    return open_file(page, tmp_path, html, name=f"mixed-{width}.html")


def shot(page, name: str) -> None:
    from tests.browser.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


@pytest.mark.parametrize("width", [1400, 390])
def test_the_solution_and_grader_tabs_replace_the_timeline_at_every_width(page, tmp_path, width):
    mixed_page(page, tmp_path, width, solution="class ModelNew:\n    pass\n", grader_log="ok")
    tabs = page.locator(".tabs").bounding_box()
    for tab, text in [("solution", "ModelNew"), ("grader", "ok")]:
        page.click(f"[data-tab={tab}]")
        expect(page.locator("[data-panel=timeline]")).to_be_hidden()
        panel = page.locator(f"[data-panel={tab}]")
        expect(panel).to_contain_text(text)
        # The panel starts under the tabs, not below a hidden timeline's height.
        assert panel.bounding_box()["y"] - (tabs["y"] + tabs["height"]) < 40
        assert page.get_attribute(f"[data-tab={tab}]", "aria-selected") == "true"
        shot(page, f"transcript-tab-{tab}-{width}")
    page.click("[data-tab=timeline]")
    expect(page.locator("#e-u1")).to_be_visible()
    expect(page.locator("[data-panel=solution]")).to_be_hidden()
    assert page.js_errors == []


# The main turn at the top of the timeline, found from the turns' boxes (the page finds it by
# hit-testing): the first whose bottom is below the sticky bar.
TURN_AT_TOP = """() => {
    const bar = document.querySelector('.toolbar').getBoundingClientRect().bottom;
    for (const turn of document.querySelectorAll('.turn[data-o]')) {
        if (turn.getBoundingClientRect().bottom > bar + 4) return turn.id.split('-').pop();
    }
    return null;
}"""
MARKED = "#outline-list a.here b"
# Resolves once the page has stopped scrolling (its position unchanged for five frames): a wheel
# may still be carrying the page on when a loaded host runs the test's next line.
SCROLL_SETTLED = """() => new Promise((resolve) => {
    let last = window.scrollY, still = 0;
    const check = () => {
        still = window.scrollY === last ? still + 1 : 0;
        last = window.scrollY;
        if (still >= 5) resolve(last); else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
})"""


def turn_at_top(page) -> str:
    page.evaluate(SCROLL_SETTLED)
    return page.evaluate(TURN_AT_TOP)


def test_the_outline_follows_the_scroll_position(page, tmp_path):
    mixed_page(page, tmp_path, 1400)
    expect(page.locator("#outline-list a.here")).to_have_text(re.compile(r"^1 "))
    page.mouse.move(900, 600)
    seen = set()
    for _ in range(60):  # down the page, into the outline's second (inert) chunk of lines
        page.mouse.wheel(0, 1500)
        top = turn_at_top(page)
        expect(page.locator(MARKED)).to_have_text(top)
        seen.add(int(top))
        if int(top) > 215:
            break
    assert max(seen) > 215 and len(seen) > 10
    marked = page.locator("#outline-list a.here")
    assert marked.get_attribute("aria-current") == "location"
    # The marked line is kept in view inside the outline's own scroll box.
    box, line = page.locator("#outline-list").bounding_box(), marked.bounding_box()
    assert box["y"] <= line["y"] and line["y"] + line["height"] <= box["y"] + box["height"]
    shot(page, "transcript-outline-follows-1400")
    page.evaluate("window.scrollTo(0, 0)")
    expect(page.locator(MARKED)).to_have_text("1")
    assert page.js_errors == []


def test_on_a_phone_the_folded_outline_names_the_turn_in_view(page, tmp_path):
    mixed_page(page, tmp_path, 390)
    expect(page.locator("#outline")).not_to_have_attribute("open", "")
    page.mouse.move(200, 600)
    for _ in range(8):
        page.mouse.wheel(0, 1500)
        page.wait_for_timeout(60)
    top = turn_at_top(page)
    expect(page.locator("#outline-at")).to_have_text(f" \u00b7 at turn {top}")
    shot(page, "transcript-outline-follows-390")
    page.evaluate("window.scrollTo(0, 0)")
    page.click("#outline > summary")
    expect(page.locator("#outline-list a.here")).to_be_in_viewport()


def visible_kinds(page) -> set[str]:
    return set(
        page.evaluate(
            """() => Array.from(document.querySelectorAll('.tl-main [data-ev]'))
                .filter((e) => e.getClientRects().length)
                .map((e) => e.className.match(/k-(\\w+)/)[1])"""
        )
    )


@pytest.mark.parametrize("width", [1400, 390])
def test_the_filter_hides_kinds_and_the_turns_they_leave_empty(page, tmp_path, width):
    mixed_page(page, tmp_path, width)
    page.click("#th-sub > summary")
    everything = {"user_text", "assistant_text", "reasoning", "tool_call", "tool_result"}
    assert visible_kinds(page) == everything
    expect(page.locator("[data-kind=reasoning]")).to_have_text("Reasoning 80")

    page.click("[data-kind=reasoning]")
    expect(page.locator("[data-kind=reasoning]")).to_have_attribute("aria-pressed", "false")
    assert visible_kinds(page) == everything - {"reasoning"}
    expect(page.locator("#t-main-3")).to_be_hidden()  # a turn of reasoning alone
    expect(page.locator("#t-main-2")).to_be_visible()

    # Tool calls hidden: the call that spawned the subagent keeps the subagent's fold only.
    page.click("[data-kind=tool_call]")
    expect(page.locator("#e-c2")).to_be_hidden()
    expect(page.locator("#th-sub")).to_be_visible()
    expect(page.locator("#e-task > .h")).to_be_hidden()
    shot(page, f"transcript-filter-{width}")
    page.click("[data-kind=subagent]")
    expect(page.locator("#th-sub")).to_be_hidden()

    # A chunk drawn after the choice is filtered as well, and search skips what is hidden.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_selector("#e-r240", state="attached")
    expect(page.locator("#e-r240")).to_be_hidden()
    expect(page.locator("#e-a239")).to_be_visible()
    page.fill("#search", "thinking about")
    page.press("#search", "Enter")
    expect(page.locator("#search-count")).to_have_text("no match")

    page.click("#kinds-all")
    expect(page.locator("#kinds-all")).to_be_hidden()
    expect(page.locator("#search-count")).to_have_text("1 / 80")
    expect(page.locator("#t-main-3")).to_be_visible()

    # A link to a hidden event shows it: the filter is lifted.
    page.click("[data-kind=reasoning]")
    page.goto(page.url.split("#")[0] + "#e-r9")
    page.wait_for_selector("#e-r9.targeted")
    expect(page.locator("#e-r9")).to_be_visible()
    expect(page.locator("[data-kind=reasoning]")).to_have_attribute("aria-pressed", "true")
    assert page.js_errors == []


def test_the_card_the_digest_and_the_outline_count_the_same_turns(page, tmp_path):
    mixed_page(page, tmp_path, 1400)
    card = page.locator("#turn-count").inner_text()
    assert card == "240 +2 in subagents"
    expect(page.locator("#outline-count")).to_have_text("240")
    outline_lines = page.evaluate(
        """() => document.querySelectorAll('#outline-list a.otl').length
            + Array.from(document.querySelectorAll('#outline-list template'))
                .reduce((n, t) => n + t.content.querySelectorAll('a.otl').length, 0)"""
    )
    assert outline_lines == 240
    expect(page.locator("#summary .digest")).to_contain_text("240 turns")


def test_on_a_phone_the_summary_is_a_fold_with_a_digest(page, tmp_path):
    mixed_page(page, tmp_path, 390)
    summary = page.locator("#summary")
    assert summary.get_attribute("open") is None
    expect(page.locator(".cards")).to_be_hidden()
    expect(page.locator("#summary > summary")).to_contain_text("passed \u00b7 240 turns")
    # The timeline starts within the first screen (the cards pushed it 830 px down).
    assert page.locator(".toolbar").bounding_box()["y"] < 400
    shot(page, "transcript-summary-folded-390")
    page.click("#summary > summary")
    expect(page.locator(".cards")).to_be_visible()
    shot(page, "transcript-summary-open-390")

    page.set_viewport_size({"width": 1400, "height": 900})
    page.reload()
    expect(page.locator(".cards")).to_be_visible()
    expect(page.locator("#summary > summary")).to_be_hidden()
    shot(page, "transcript-summary-1400")
