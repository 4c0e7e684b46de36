"""Transcript import and render figures (plain Python, no Django needed).

    python bench/transcripts.py [--runs 5] [--out bench/results/transcripts.json]

On a generated 20 MB Claude Code session (10,000 events, subagents in the 2.1.x layout) and a
5 MB Codex rollout (bench/transcript_logs.py):
(a) import (redaction of the raw bytes + parsing) and render (the self-contained export,
    written to a file piece by piece as `python -m transcripts render` and the page's cache do),
    median of --runs runs, target <= 2 s each;
(b) peak memory of one import + render in a fresh process (ru_maxrss), against the file size,
    target <= 10x (reported both over the interpreter's baseline and as the whole process), and
    the same with the export built as one string in memory (export_html) for comparison;
(c) first contentful paint of the rendered file in Chromium, target < 1.5 s;
(d) claude-code-log from PyPI on the same Claude Code session, in its own virtualenv under
    var/ (never one of the project's dependencies): its time over ours, goal >= 5x.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.transcript_logs import write_claude_code_session, write_codex_rollout  # noqa: E402
from transcript_formats import parse_path  # noqa: E402
from transcript_formats.redact import redact_bytes  # noqa: E402
from transcript_render import export_html, export_to  # noqa: E402

WORK = REPO / "var" / "bench-transcripts"
CCL_VENV = REPO / "var" / "bench-claude-code-log-venv"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CLAUDE_BYTES, CLAUDE_EVENTS, CODEX_BYTES = 20_000_000, 10_000, 5_000_000


def log_files(path: Path) -> list[Path]:
    """The main file and, for a Claude Code session, its subagent files."""
    folder = path.with_suffix("")
    extra = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    return [path, *extra]


def import_and_render(path: Path, *, as_string: bool = False) -> dict[str, float | int | str]:
    """One run: redact every file, parse, render; seconds per phase (and CPU seconds in all)."""
    cpu_start = time.process_time()
    start = time.perf_counter()
    for file in log_files(path):
        redact_bytes(file.read_bytes())
    redacted = time.perf_counter()
    transcript = parse_path(path)
    parsed = time.perf_counter()
    if as_string:
        html_bytes = len(export_html(transcript))  # characters; the same for an ASCII page
    else:
        out = path.with_name(path.name + ".export.html")
        with out.open("w", encoding="utf-8") as stream:
            export_to(stream, transcript)
        html_bytes = out.stat().st_size
    rendered = time.perf_counter()
    return {
        "redact_s": redacted - start,
        "parse_s": parsed - redacted,
        "render_s": rendered - parsed,
        "total_s": rendered - start,
        # On a shared host the wall clock includes waiting for a core; CPU time does not.
        "total_cpu_s": time.process_time() - cpu_start,
        "events": len(transcript.events()),
        "html_bytes": html_bytes,
        "format": transcript.format,
    }


def timing(path: Path, runs: int) -> dict[str, object]:
    results = [import_and_render(path) for _ in range(runs)]
    median = {
        key: statistics.median(float(r[key]) for r in results)
        for key in ("redact_s", "parse_s", "render_s", "total_s", "total_cpu_s")
    }
    return {
        **median,
        "runs": [round(float(r["total_s"]), 3) for r in results],
        **{key: results[0][key] for key in ("events", "html_bytes", "format")},
    }


def child_memory(path: str, *, as_string: bool) -> None:
    """Run in a fresh process: peak RSS before and after one import + render (KiB on Linux)."""
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    import_and_render(Path(path), as_string=as_string)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"baseline_bytes": baseline_kib * 1024, "peak_bytes": peak_kib * 1024}))


def memory(path: Path, *, as_string: bool = False) -> dict[str, float | int]:
    # Linux carries ru_maxrss across fork and exec, so a child of this (large) process would
    # report our peak; a shell in between forks the child from its own small image instead.
    command = f"{shlex.quote(sys.executable)} {shlex.quote(__file__)} --memory-child "
    command += f"{shlex.quote(str(path))}{' --as-string' if as_string else ''}; exit $?"
    out = subprocess.run(
        ["/bin/sh", "-c", command],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    size = sum(p.stat().st_size for p in log_files(path))
    return {
        **figures,
        "file_bytes": size,
        "peak_over_file": figures["peak_bytes"] / size,
        "growth_over_file": (figures["peak_bytes"] - figures["baseline_bytes"]) / size,
    }


FCP_SCRIPT = """() => new Promise((resolve) => {
  const seen = performance.getEntriesByName('first-contentful-paint');
  if (seen.length) { resolve(seen[0].startTime); return; }
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.name === 'first-contentful-paint') resolve(e.startTime);
    }
  }).observe({type: 'paint', buffered: true});
})"""


def first_paint(html_path: Path, runs: int) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    paints, loads = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(html_path.as_uri(), wait_until="commit")
            paints.append(page.evaluate(FCP_SCRIPT) / 1000)
            page.wait_for_load_state("load")
            loads.append(
                page.evaluate(
                    "performance.timing.loadEventEnd - performance.timing.navigationStart"
                )
                / 1000
            )
            context.close()
        browser.close()
    return {
        "first_contentful_paint_s": statistics.median(paints),
        "load_event_s": statistics.median(loads),
        "runs": [round(p, 3) for p in paints],
    }


def claude_code_log(path: Path, runs: int) -> dict[str, object]:
    """claude-code-log converting the same session to HTML, in its own throwaway virtualenv."""
    cli = CCL_VENV / "bin" / "claude-code-log"
    if not cli.exists():
        subprocess.run([sys.executable, "-m", "venv", str(CCL_VENV)], check=True)
        pip = [str(CCL_VENV / "bin" / "pip"), "install", "--quiet", "claude-code-log"]
        subprocess.run(pip, check=True)
    version = (
        subprocess.run(
            [str(CCL_VENV / "bin" / "pip"), "show", "claude-code-log"],
            check=True,
            capture_output=True,
            text=True,
        )
        .stdout.split("Version:", 1)[1]
        .split()[0]
    )
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as home:
            out = Path(home) / "out.html"
            env = dict(os.environ, HOME=home)  # its cache and config land in the throwaway home
            start = time.perf_counter()
            subprocess.run(
                [str(cli), str(path), "-o", str(out), "--no-cache"],
                check=True,
                capture_output=True,
                env=env,
            )
            times.append(time.perf_counter() - start)
    return {
        "version": version,
        "median_s": statistics.median(times),
        "runs": [round(t, 3) for t in times],
    }


def table(results: dict[str, dict]) -> str:
    rows = [("", "claude-code (20 MB)", "codex (5 MB)")]
    c, x = results["claude_code"], results["codex"]
    rows += [
        ("events", f"{c['timing']['events']:,}", f"{x['timing']['events']:,}"),
        (
            "file MB",
            f"{c['memory']['file_bytes'] / 1e6:.1f}",
            f"{x['memory']['file_bytes'] / 1e6:.1f}",
        ),
        *[
            (f"{k} (median)", f"{c['timing'][k]:.3f} s", f"{x['timing'][k]:.3f} s")
            for k in ("redact_s", "parse_s", "render_s", "total_s", "total_cpu_s")
        ],
        (
            "peak RSS / file",
            f"{c['memory']['peak_over_file']:.1f}x",
            f"{x['memory']['peak_over_file']:.1f}x",
        ),
        (
            "peak RSS / file, as one string",
            f"{c['memory_as_string']['peak_over_file']:.1f}x",
            f"{x['memory_as_string']['peak_over_file']:.1f}x",
        ),
        (
            "RSS growth / file",
            f"{c['memory']['growth_over_file']:.1f}x",
            f"{x['memory']['growth_over_file']:.1f}x",
        ),
        (
            "first paint",
            f"{c['paint']['first_contentful_paint_s']:.3f} s",
            f"{x['paint']['first_contentful_paint_s']:.3f} s",
        ),
        (
            "load event",
            f"{c['paint']['load_event_s']:.3f} s",
            f"{x['paint']['load_event_s']:.3f} s",
        ),
    ]
    if "claude_code_log" in results:
        ccl = results["claude_code_log"]
        rows.append(
            ("claude-code-log", f"{ccl['median_s']:.3f} s ({ccl['times_slower']:.1f}x ours)", "n/a")
        )
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join("  ".join(cell.ljust(width[i]) for i, cell in enumerate(r)) for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "transcripts.json")
    parser.add_argument("--skip-claude-code-log", action="store_true")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--as-string", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        child_memory(args.memory_child, as_string=args.as_string)
        return
    shutil.rmtree(WORK, ignore_errors=True)
    claude = WORK / "claude" / "bench-session.jsonl"
    codex = WORK / "codex" / "rollout-2025-11-20T12-00-00-bench.jsonl"
    write_claude_code_session(claude, target_bytes=CLAUDE_BYTES, events=CLAUDE_EVENTS)
    write_codex_rollout(codex, target_bytes=CODEX_BYTES)
    results: dict[str, dict] = {}
    # The host is shared; the load says how much of the CPU the figures below really had.
    load_before = os.getloadavg()[0]
    for name, path in (("claude_code", claude), ("codex", codex)):
        html_path = WORK / f"{name}.html"
        html_path.write_text(export_html(parse_path(path)), encoding="utf-8")
        results[name] = {
            "timing": timing(path, args.runs),
            "memory": memory(path),
            "memory_as_string": memory(path, as_string=True),
            "paint": first_paint(html_path, 3),
        }
    if not args.skip_claude_code_log:
        ccl = claude_code_log(claude, 3)
        ccl["times_slower"] = ccl["median_s"] / results["claude_code"]["timing"]["total_s"]
        results["claude_code_log"] = ccl
    results["machine"] = {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    print(f"load average (1 min) before/after: {results['machine']['load_average_1m']}")
    print(
        f"\nwritten to {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}"
    )


if __name__ == "__main__":
    main()
