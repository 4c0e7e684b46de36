"""What the board, the run pages, the run list, the matrix and the compare pages mean, in
Chromium at a desktop (1400 px) and a phone (390 px) width, on the demo's recorded runs (with a
run of each kind the demo lacks) and on a board of 30 agents: one verdict word per kind of run
and green for a ranked run alone, the stated sort key, failures counted and never drawn as
0.01x, rank ranges, one colour per agent on every plot, no empty panel, the matrix coloured by
speedup with its legend, tables that show they scroll, and two agents compared task by task.

Each test walks its pages at both widths and keeps a screenshot of each under
$ARENA_DATA_DIR/screenshots/board-meaning/.
"""

import json
import math
import re
from pathlib import Path

import pytest
from django.core.cache import cache
from django.utils import timezone

from arena.demo.scripted_runs import DEMO_TASKS, DemoAgent
from arena.demo.seeding import (
    demo_recorded_load,
    demo_recorded_paths,
    demo_run_import_recorded,
    recorded_matches,
)
from arena.models import Agent, Run, Submission
from arena.run_logs import trajectory_upload
from arena.run_scores import leaderboard_rebuild
from arena.run_verdicts import KINDS
from evaluator.models import Evaluation
from leaderboard.figures import _COLORS
from leaderboard.templatetags.leaderboard import speed_bin
from tasks.models import Task
from tasks.services import task_sync
from tests.browser.conftest import SCREENSHOTS
from tests.leaderboard.factories import H200, grader_result, make_agent, make_run, make_task

pytestmark = pytest.mark.django_db(transaction=True)

WIDTHS = (1400, 390)
SHOTS = SCREENSHOTS / "board-meaning"
H100 = "NVIDIA H100 80GB HBM3"  # the demo's recordings
GREEN_BACKGROUND = "rgb(229, 244, 234)"  # .verdict-pass, ranked alone
DASH = "\N{EN DASH}"  # between the two ends of a place range
CHAT = json.dumps([{"role": "user", "content": "Write the kernel."}]).encode()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def visit(page, live_server, path: str, width: int, name: str):
    page.set_viewport_size({"width": width, "height": 900})
    response = page.goto(live_server.url + path)
    assert response.status == 200, path
    page.wait_for_load_state("load")
    page.wait_for_timeout(200)  # plots and the scroll hint draw after load
    shot(page, f"{name}-{width}")
    return page


def hex_of(rgb: str) -> str:
    r, g, b = (int(v) for v in re.findall(r"\d+", rgb)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


# --- what the tests read off a page -----------------------------------------------------------


def badges(page, scope: str = "body") -> list[dict]:
    """Every verdict badge under `scope`: its code, words and colours."""
    return page.locator(f"{scope} .verdict").evaluate_all(
        """els => els.map(e => ({code: e.dataset.verdict, text: e.textContent.trim(),
            background: getComputedStyle(e).backgroundColor}))"""
    )


def assert_words_and_colours(found: list[dict]) -> None:
    """Every badge says its kind's one word, and only a ranked one is green."""
    assert found
    for badge in found:
        assert badge["text"] == KINDS[badge["code"]].label, badge
        assert (badge["background"] == GREEN_BACKGROUND) == (badge["code"] == "ranked"), badge


def headline(page) -> dict:
    head = page.locator("h2.verdict-head").first
    return {
        "code": head.locator(".verdict").get_attribute("data-verdict"),
        "text": head.inner_text(),
        "background": head.locator(".verdict").evaluate("e => getComputedStyle(e).backgroundColor"),
        "flag_links": head.locator("a.flag-code").evaluate_all("as => as.map(a => a.href)"),
    }


def figure_colours(page) -> dict[str, set[str]]:
    """Per agent, every colour the board's figures give it (their specs, as plotly draws them)."""
    specs = page.locator('script[type="application/json"][id^="plot-"]').evaluate_all(
        "els => els.map(e => JSON.parse(e.textContent))"
    )
    colours: dict[str, set[str]] = {}
    for spec in specs:
        for trace in spec["data"]:
            name = trace.get("name", "")
            colour = (trace.get("line") or {}).get("color") or (trace.get("marker") or {}).get(
                "color"
            )
            if isinstance(colour, str) and name.startswith(("scripted-", "agent-")):
                colours.setdefault(name, set()).add(colour)
    return colours


def ranking(page) -> list[dict]:
    return page.locator("#ranking tbody tr").evaluate_all(
        """rows => rows.map(r => ({
            agent: r.querySelector("td.agent-col a").textContent.trim(),
            slug: r.querySelector("input[name=agent]").value,
            place: r.querySelector(".rank-label").textContent.trim(),
            speedup: parseFloat(r.querySelector("td.speedup-cell").dataset.value),
            speedupText: r.querySelector("td.speedup-cell").textContent,
            best: r.querySelector("td.best-run").textContent.trim(),
            swatch: getComputedStyle(r.querySelector(".swatch")).backgroundColor}))"""
    )


def places(label: str) -> tuple[int, int]:
    low, _, high = label.partition(DASH)
    return int(low), int(high or low)


def assert_plots_drawn_in_one_colour_per_agent(page, rows: list[dict]) -> None:
    assert page.locator(".plots .empty").count() == 0  # no empty panel
    for plot in page.locator("figure.plot .plot-area").all():
        plot.locator("svg.main-svg").first.wait_for(timeout=15000)
    colours = figure_colours(page)
    assert colours
    for agent, seen in colours.items():
        assert len(seen) == 1, (agent, seen)
    for row in rows:  # the board's swatch is the plots' colour
        if row["slug"] in colours:
            assert {hex_of(row["swatch"])} == colours[row["slug"]], row


def assert_table_shows_it_scrolls(page, table: str) -> None:
    """On a phone: a visible line says how many columns are in view, the edge fades, and the
    first column stays in view when the table is scrolled to its end."""
    wrap = page.locator(f".table-wrap:has({table})")
    hint = wrap.locator("xpath=preceding-sibling::p[1]")
    assert "scroll-hint" in hint.get_attribute("class")
    assert hint.is_visible() and re.search(r"\d+ of \d+ columns in view", hint.inner_text())
    assert "more-right" in wrap.get_attribute("class")
    wrap.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    page.wait_for_timeout(100)
    first = page.locator(f"{table} tbody tr").first.locator("td, th").first
    box = first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert "more-left" in wrap.get_attribute("class")
    assert "scrolls back" in hint.inner_text()


def assert_matrix_coloured_by_speedup(page) -> None:
    legend = page.locator("#matrix-legend")
    assert legend.is_visible()
    assert legend.locator("ol.speed-scale li").count() == 8
    for mark in ("⚑ flagged", "✗ failed", "ERR"):
        assert mark in legend.inner_text()
    cells = page.locator("#matrix td.cell").evaluate_all(
        """tds => tds.map(td => ({verdict: td.dataset.verdict, speedup: td.dataset.speedup,
            cls: td.className, background: getComputedStyle(td).backgroundColor}))"""
    )
    ranked = [c for c in cells if c["verdict"] == "ranked"]
    assert ranked
    for cell in ranked:
        expected = speed_bin(float(cell["speedup"]))
        assert expected in cell["cls"].split(), cell
        slower = float(cell["speedup"]) <= 1.0
        assert expected.startswith("speed-m") == slower, cell
    unranked_backgrounds = {c["background"] for c in cells if c["verdict"] != "ranked"}
    green_bins = {c["background"] for c in ranked if "speed-p" in c["cls"]}
    assert not unranked_backgrounds & green_bins  # no flag or failure looks fast


# --- the demo ---------------------------------------------------------------------------------


@pytest.fixture
def demo(settings, tmp_path):
    """The demo's recorded runs as seed_demo imports them, and a run of each kind it lacks:
    a grader error, a CPU grading, a transcript without a kernel."""
    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()  # the live server runs in this process and shares its cache
    task_sync()
    tasks = {t.slug: t for t in Task.objects.filter(slug__in=DEMO_TASKS)}
    runs = {}
    for (strategy, slug), recorded in demo_recorded_load(paths=demo_recorded_paths()).items():
        if slug in tasks and recorded_matches(recorded=recorded, task=tasks[slug]):
            run = demo_run_import_recorded(
                agent=DemoAgent(strategy), task=tasks[slug], recorded=recorded
            )
            runs[(strategy, slug)] = run
    extra = make_agent("extra-kinds", name="Extra Kinds")
    runs["error"] = make_run(extra, tasks["tt-softmax"], outcome="error", gpu=H100)
    runs["cpu"] = make_run(extra, tasks["tt-row-max"], speedup=None, gpu="cpu")
    runs["transcript"] = Run.objects.create(agent=extra, task=tasks["tt-cumsum"], status="done")
    trajectory_upload(data=CHAT, filename="chat.json", run_id=runs["transcript"].pk)
    return runs


def test_the_demo_reads_right_on_every_page_at_both_widths(page, live_server, demo):
    flagged = demo[("reference", "tt-vector-add")]  # the PyTorch reference copied
    expected = {
        flagged.pk: "flagged",
        demo[("broken", "tt-vector-add")].pk: "failed",
        demo[("starter", "tt-vector-add")].pk: "ranked",
        demo["error"].pk: "grader_error",
        demo["cpu"].pk: "unranked_cpu",
        demo["transcript"].pk: "transcript_only",
    }
    for width in WIDTHS:
        # Each kind of run heads its page with its one word, green for ranked alone.
        for run_id, code in expected.items():
            visit(page, live_server, f"/runs/{run_id}/", width, f"demo-run-{code}")
            head = headline(page)
            assert head["code"] == code and KINDS[code].label in head["text"]
            assert (head["background"] == GREEN_BACKGROUND) == (code == "ranked")
        visit(page, live_server, f"/runs/{flagged.pk}/", width, "demo-run-flagged")
        head = headline(page)
        assert "forbidden_op" in head["text"] and "no_own_kernel" in head["text"]
        assert any(link.endswith("/scoring/#flag-forbidden_op") for link in head["flag_links"])
        flags = page.locator("ul.flags")
        assert flags.bounding_box()["y"] < page.locator("h3:has-text('Shapes')").bounding_box()["y"]
        performance = page.locator("table.gates tr", has_text="performance").inner_text()
        assert "not faster than PyTorch eager" in performance and "slower" not in performance
        page.locator("h2.verdict-head a.flag-code").first.click()
        page.wait_for_url("**/scoring/#flag-forbidden_op")
        assert page.locator("#flag-forbidden_op").is_visible()

        # The run list says the same words, and so does the API.
        visit(page, live_server, "/runs/", width, "demo-runs")
        listed = page.locator("table.run-table tbody tr").evaluate_all(
            """rows => rows.map(r => [
                parseInt(r.querySelector("td.run-col a").textContent.slice(1)),
                r.querySelector(".verdict").dataset.verdict])"""
        )
        listed = dict(listed)
        for run_id, code in expected.items():
            assert listed[run_id] == code
        assert_words_and_colours(badges(page, "table.run-table"))
        api = page.request.get(live_server.url + "/api/v1/runs?limit=100").json()["results"]
        assert {r["id"]: r["verdict"] for r in api} == listed
        assert all(r["verdict_label"] == KINDS[r["verdict"]].label for r in api)

        # The board: the key stated, its order meaningful, failures counted, ranges, colours.
        visit(page, live_server, "/", width, "demo-board")
        assert "Ranked by Speedup" in page.locator("#board-gpu").inner_text()
        rows = ranking(page)
        assert [r["slug"] for r in rows[:2]] == ["scripted-starter-demo", "scripted-weak-demo"]
        assert [r["place"] for r in rows] == [f"1{DASH}2", f"1{DASH}2", f"3{DASH}4", f"3{DASH}4"]
        assert [r["speedup"] for r in rows] == sorted((r["speedup"] for r in rows), reverse=True)
        for row in rows[2:]:
            assert (
                "no ranked run" in row["speedupText"]
                and "7 of 7 failed or flagged" in (row["speedupText"])
            )
            assert "0.01x" not in row["speedupText"] and row["best"] == "none ranked"
        assert_words_and_colours(badges(page, "#recent-runs"))
        assert_plots_drawn_in_one_colour_per_agent(page, rows)
        page.locator('a.sort[data-sort="tokens"]').click()  # sorted in the browser instead
        assert not page.locator("#ranking .rank-label").first.is_visible()  # places say nothing
        page.reload()
        if width == 390:
            assert_table_shows_it_scrolls(page, "#ranking")
        else:
            wrap = page.locator(".table-wrap:has(#ranking)")  # at 1400 all of it is in view
            assert wrap.evaluate("e => e.scrollWidth - e.clientWidth") <= 1
            assert not wrap.locator("xpath=preceding-sibling::p[1]").is_visible()

        # The matrix, coloured by speedup, with its legend.
        visit(page, live_server, "/matrix/", width, "demo-matrix")
        assert_matrix_coloured_by_speedup(page)
        cells = page.locator("#matrix tr", has_text="scripted-reference").locator("td.cell")
        assert "⚑ flagged" in cells.first.inner_text()

        # Two agents, picked on the board.
        page.goto(live_server.url + "/")
        compare = page.locator("#compare-agents button")
        assert compare.is_disabled()
        for slug in ("scripted-starter-demo", "scripted-weak-demo"):
            page.locator(f'#ranking input[value="{slug}"]').check()
        assert page.locator('#ranking input[value="scripted-broken-demo"]').is_disabled()
        compare.click()
        page.wait_for_url("**/compare/agents/**")
        page.wait_for_timeout(200)
        shot(page, f"demo-compare-agents-{width}")
        assert (
            "wins 1, loses 0 and ties 4 of the 5 tasks" in page.locator("#duel-score").inner_text()
        )
        assert "Sign test" in page.locator("#duel-test").inner_text()
        assert "overlap" in page.locator("#intervals-overlap").inner_text()
        outcomes = page.locator("#duels tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.outcome)"
        )
        assert outcomes.count("a") == 1 and outcomes.count("tie") == 4
        assert page.js_errors == []


def test_compare_with_no_runs_is_a_chooser_reached_from_an_agent_page(page, live_server, demo):
    for width in WIDTHS:
        visit(page, live_server, "/compare/", width, "compare-chooser")
        assert page.locator("#choose-agents select[name=a] option").count() == 4
        page.locator("#choose-agents button").click()
        page.wait_for_url("**/compare/agents/?**")
        assert page.locator("#duel-score").is_visible()
        visit(page, live_server, "/agents/scripted-weak-demo/", width, "agent-compare-with")
        form = page.locator("#compare-with")
        form.locator("select[name=b]").select_option("scripted-reference-demo")
        form.locator("button").click()
        page.wait_for_url("**/compare/agents/?**")
        page.wait_for_timeout(200)
        shot(page, f"agent-compare-weak-reference-{width}")
        # weak has 5 ranked tasks where reference was flagged; both flagged on two.
        assert "wins 5, loses 0 and ties 2" in page.locator("#duel-score").inner_text()
        assert "p = 0.06" in page.locator("#duel-test").inner_text()  # 2 / 2^5
    assert page.js_errors == []


# --- a board of 30 agents ---------------------------------------------------------------------

N_AGENTS, N_TASKS = 30, 12
CLEAN_AGENTS = 10  # the first ten fail and are flagged nowhere


def bulk_board() -> list[Agent]:
    """30 agents on 12 tasks, in bulk: agent k's runs sit around 2^(2 - k/6) times eager; from
    agent 10 on, one of its tasks failed and one flagged; and a CPU grading of one agent's."""
    tasks = [make_task(f"bulk-{i:02d}", category="torch2triton") for i in range(N_TASKS)]
    agents = Agent.objects.bulk_create(
        Agent(slug=f"agent-{k:02d}", name=f"agent-{k:02d}", harness="claude-code", model="m")
        for k in range(N_AGENTS)
    )
    runs = Run.objects.bulk_create(
        Run(agent=agent, task=task, status=Run.Status.DONE) for agent in agents for task in tasks
    )
    evaluations = []
    for run in runs:
        k, i = int(run.agent.slug[-2:]), int(run.task.slug[-2:])
        speed = 2 ** (2 - k / 6 + ((i * 7 + k) % 5 - 2) / 4)
        if k >= CLEAN_AGENTS and (i * 5 + k) % N_TASKS == 0:
            result = grader_result(outcome="incorrect")
        elif k >= CLEAN_AGENTS and (i * 7 + k) % N_TASKS == 1:
            result = grader_result(speedup=speed, flags=("timing_tampered",))
        else:
            result = grader_result(speedup=speed)
        evaluations.append(
            Evaluation(
                task=run.task,
                task_version=run.task.version_hash,
                solution_code="class ModelNew: pass\n",
                solution_sha256="0" * 64,
                status=result["status"],
                device="cuda",
                reward=result["reward"],
                ranked=result["ranked"],
                result=result,
                finished_at=timezone.now(),
            )
        )
    evaluations = Evaluation.objects.bulk_create(evaluations)
    Submission.objects.bulk_create(
        Submission(run=run, evaluation=evaluation)
        for run, evaluation in zip(runs, evaluations, strict=True)
    )
    leaderboard_rebuild()
    make_run(agents[3], tasks[0], speedup=None, gpu="cpu")
    return agents


@pytest.fixture
def thirty(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()
    return bulk_board()


def test_a_board_of_thirty_agents_is_ordered_ranged_and_coloured(page, live_server, thirty):
    for width in WIDTHS:
        visit(page, live_server, "/", width, "thirty-board")
        assert f"Board: {H200}" in page.locator("#board-gpu").inner_text()
        rows = ranking(page)
        assert len(rows) == N_AGENTS
        speedups = [r["speedup"] for r in rows]
        assert speedups == sorted(speedups, reverse=True)  # the stated key, best first
        assert rows[0]["slug"] == "agent-00" and rows[-1]["slug"] == "agent-29"
        for position, row in enumerate(rows, 1):
            best, worst = places(row["place"])
            assert best <= position <= worst, row
        assert any(DASH in r["place"] for r in rows)  # neighbours' intervals overlap
        assert places(rows[0]["place"])[1] < places(rows[-1]["place"])[0]  # the ends do not
        assert_plots_drawn_in_one_colour_per_agent(page, rows)
        styles = figure_symbols(page)
        assert styles["agent-00"] != styles["agent-10"]  # one colour: told apart by marker
        for row in rows:  # failures counted under the mean, where there are any
            clean = int(row["slug"][-2:]) < CLEAN_AGENTS
            assert (f"2 of {N_TASKS} failed or flagged" in row["speedupText"]) != clean, row
        if width == 390:
            assert_table_shows_it_scrolls(page, "#ranking")

        visit(page, live_server, "/matrix/", width, "thirty-matrix")
        assert_matrix_coloured_by_speedup(page)
        order = page.locator("#matrix tbody th.agent-col").all_inner_texts()
        assert order == [r["agent"] for r in rows]  # the board's order
        if width == 390:
            assert_table_shows_it_scrolls(page, "#matrix")

        visit(page, live_server, "/runs/?limit=50", width, "thirty-runs")
        found = badges(page, "table.run-table")
        assert {b["code"] for b in found} >= {"ranked", "failed", "flagged"}
        assert_words_and_colours(found)

        visit(page, live_server, "/", width, "thirty-board")
        for slug in ("agent-00", "agent-01"):
            page.locator(f'#ranking input[value="{slug}"]').check()
        page.locator("#compare-agents button").click()
        page.wait_for_url("**/compare/agents/**")
        page.wait_for_timeout(200)
        shot(page, f"thirty-compare-agents-{width}")
        summary = page.locator("#duel-score").inner_text()
        counts = re.search(r"wins (\d+), loses (\d+) and ties (\d+)", summary)
        wins, losses, ties = (int(n) for n in counts.groups())
        assert wins + losses + ties == N_TASKS
        p_text = page.locator("#duel-test").inner_text()
        p_value = float(re.search(r"p = ([\d.]+)", p_text).group(1))
        n = wins + losses
        tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1))
        assert p_value == pytest.approx(min(1.0, 2 * tail / 2**n), abs=5e-4)
        assert page.locator("#plot-duel svg.main-svg").first.is_visible()
    assert page.js_errors == []


def figure_symbols(page) -> dict[str, str]:
    """Per agent, its marker symbol on the speedup strip."""
    spec = json.loads(page.locator("#plot-speedup-figure").text_content())
    return {t["name"]: t["marker"]["symbol"] for t in spec["data"][2:]}


def test_the_palette_of_swatches_is_the_palette_of_the_plots():
    """arena.css's agent-color-<n> classes repeat figures._COLORS, in order."""
    css = (Path(__file__).resolve().parents[2] / "static/css/arena.css").read_text()
    found = dict(re.findall(r"\.agent-color-(\d+) \{ background: (#[0-9a-f]{6}); \}", css))
    assert [found[str(i)] for i in range(len(_COLORS))] == list(_COLORS)
