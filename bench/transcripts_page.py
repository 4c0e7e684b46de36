"""The transcript page in Chromium on a 20 MB session: search, expand-all, a deep link.

    python bench/transcripts_page.py [--runs 5] [--out bench/results/transcripts-page.json]
                                     [--baseline-html OLD.html]

Generates the Claude Code session of bench/transcript_logs.py (20 MB, 10,000 events), renders
its export, opens it in Chromium (Playwright, /usr/bin/chromium) and measures, each run in a
fresh page, from the click to the first frame after it (a requestAnimationFrame, then a task):
(a) a search for "pytest" (about 1,900 matches in tool calls, their previews and results),
    target < 1 s, then stepping to the next match;
(b) Expand all, target < 1 s;
(c) a deep link to an event near the end (in a chunk still inert): the time to land and
    whether the event ends up in view below the sticky search bar.
`--baseline-html` measures another rendering of the same session the same way (the page
before these changes, for the comparison). Writes the medians, each run and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.transcript_logs import write_claude_code_session  # noqa: E402
from transcript_formats import parse_path  # noqa: E402
from transcript_render import export_to  # noqa: E402

WORK = REPO / "var" / "bench-transcripts-page"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TERM = "pytest"

CLICK_TO_FRAME = """(selector) => new Promise((resolve) => {
    const start = performance.now();
    document.querySelector(selector).click();
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
})"""

IN_VIEW = """(id) => {
    const el = document.getElementById(id);
    if (!el) return null;
    const box = el.getBoundingClientRect();
    const bar = document.querySelector('.toolbar').getBoundingClientRect();
    return {top: box.top, bar_bottom: bar.bottom, viewport: window.innerHeight};
}"""


def session() -> tuple[Path, Path]:
    log = WORK / "0f0e0d0c-0000-4000-8000-000000000001.jsonl"
    if not log.exists():
        write_claude_code_session(log)
    html = WORK / "page.html"
    start = time.perf_counter()
    transcript = parse_path(log)
    with html.open("w", encoding="utf-8") as out:
        export_to(out, transcript)
    print(f"rendered {html.stat().st_size:,} bytes in {time.perf_counter() - start:.2f} s")
    return log, html


def last_event_id(html: Path) -> str:
    text = html.read_text(encoding="utf-8")
    return text[text.rindex('<article class="ev') :].split('id="', 1)[1].split('"', 1)[0]


def measure(html: Path, runs: int, *, deep_link: str | None) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        for _ in range(runs):
            rows.append(_one_run(browser, html, deep_link))
        browser.close()
    summary: dict[str, object] = {"runs": rows}
    for key in ("load_s", "search_s", "next_s", "expand_all_s", "deep_link_s"):
        values = [row[key] for row in rows if isinstance(row.get(key), float)]
        if values:
            summary[f"{key}_median"] = round(statistics.median(values), 3)
    summary["matches"] = rows[0].get("matches")
    summary["deep_link_in_view"] = all(row.get("deep_link_in_view", True) for row in rows)
    return summary


def _one_run(browser, html: Path, deep_link: str | None) -> dict[str, object]:
    row: dict[str, object] = {}
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    start = time.perf_counter()
    page.goto(html.as_uri())
    row["load_s"] = round(time.perf_counter() - start, 3)
    page.fill("#search", TERM)
    row["search_s"] = round(page.evaluate(CLICK_TO_FRAME, "#search-go") / 1000, 3)
    row["matches"] = page.inner_text("#search-count")
    row["next_s"] = round(page.evaluate(CLICK_TO_FRAME, "#search-next") / 1000, 3)
    page.close()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(html.as_uri())
    row["expand_all_s"] = round(page.evaluate(CLICK_TO_FRAME, "#expand-all") / 1000, 3)
    page.close()
    if deep_link:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        start = time.perf_counter()
        page.goto(f"{html.as_uri()}#{deep_link}")
        page.wait_for_function(f"document.getElementById('{deep_link}') !== null")
        row["deep_link_s"] = round(time.perf_counter() - start, 3)
        page.wait_for_timeout(300)
        where = page.evaluate(IN_VIEW, deep_link)
        row["deep_link"] = where
        row["deep_link_in_view"] = bool(
            where and where["bar_bottom"] - 1 <= where["top"] < where["viewport"]
        )
        page.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "transcripts-page.json"))
    parser.add_argument("--baseline-html", help="another rendering of the session to compare")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    log, html = session()
    target = last_event_id(html)
    result: dict[str, object] = {
        "session_bytes": log.stat().st_size,
        "page_bytes": html.stat().st_size,
        "search_term": TERM,
        "load_average_before": os.getloadavg(),
        "cpus": os.cpu_count(),
        "chromium": CHROMIUM,
        "page": measure(html, args.runs, deep_link=target),
    }
    if args.baseline_html:
        result["baseline"] = measure(Path(args.baseline_html).resolve(), args.runs, deep_link=None)
    result["load_average_after"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("page", "baseline")}))
    for name in ("page", "baseline"):
        if name in result:
            figures = result[name]
            assert isinstance(figures, dict)
            print(name, {k: v for k, v in figures.items() if k != "runs"})


if __name__ == "__main__":
    main()
