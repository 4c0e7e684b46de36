"""Bytes a browser transfers for a page of the site, cold and then warm, as deployed.

    python bench/page_weight.py [--path /] [--out bench/results/page-weight.json]
                                [--data-dir var/bench-page-weight]

The app runs as docs/deploy.md deploys it: migrate, sync_tasks, the demo board (`seed_demo`,
runs that really happened), collectstatic, then gunicorn (DEBUG off, WhiteNoise serving the
collected files), in a data folder of its own. Chromium (Debian's, through Playwright) opens the
page in a fresh context, so with an empty cache, waits until its plots are drawn and the
network is idle, and counts every response's bytes as they came over the wire (the devtools
protocol's encodedDataLength: headers and the body as sent, compressed or not); then it opens
the page again in the same context, as a returning visitor does.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.web import free_port, server_start  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
BUDGET_BYTES = 600_000  # the board, cold


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", default="/", help="the page to weigh")
    parser.add_argument("--ready", default="#plot-speedup svg.main-svg", help="drawn when ready")
    parser.add_argument("--data-dir", type=Path, default=REPO / "var" / "bench-page-weight")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "page-weight.json")
    return parser.parse_args()


def app_prepare(env: dict[str, str]) -> None:
    """The schema, the catalogue and the demo board in the bench's own data folder."""
    manage = [sys.executable, "manage.py"]
    for command in (
        ["migrate", "--no-input", "-v", "0"],
        ["sync_tasks"],
        ["seed_demo", "--if-empty"],
    ):
        subprocess.run(
            [*manage, *command], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL
        )


def page_load(context, url: str, ready: str) -> dict:
    """Open `url` in `context` and count what came over the network for it."""
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    responses: dict[str, dict] = {}

    def received(event):
        response = event["response"]
        headers = {key.lower(): value for key, value in response["headers"].items()}
        responses[event["requestId"]] = {
            "url": urlsplit(response["url"]).path,
            "status": response["status"],
            "encoding": headers.get("content-encoding", ""),
            "cache_control": headers.get("cache-control", ""),
            "from_cache": response.get("fromDiskCache", False),
        }

    def finished(event):
        if event["requestId"] in responses:
            responses[event["requestId"]]["bytes"] = int(event["encodedDataLength"])

    cdp.on("Network.responseReceived", received)
    cdp.on("Network.loadingFinished", finished)
    page.goto(url)
    page.wait_for_selector(ready, timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.close()
    resources = sorted(responses.values(), key=lambda r: -r.get("bytes", 0))
    return {
        "bytes": sum(r.get("bytes", 0) for r in resources),
        "requests": len(resources),
        "resources": resources,
    }


def main() -> None:
    args = parse_args()
    from playwright.sync_api import sync_playwright

    args.data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "ARENA_BROKER_URL")},
        "ARENA_DEBUG": "0",
        "ARENA_SECRET_KEY": os.environ.get("ARENA_SECRET_KEY") or "bench-page-weight-only-key",
        "ARENA_DATA_DIR": str(args.data_dir),
        "ARENA_LOG_LEVEL": "WARNING",
    }
    app_prepare(env)
    port = free_port()
    proc, command = server_start(env=env, port=port, workers=1, threads=4, log_dir=args.data_dir)
    url = f"http://127.0.0.1:{port}{args.path}"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            cold = page_load(context, url, args.ready)
            warm = page_load(context, url, args.ready)
            version = browser.version
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    results = {
        "what": f"bytes transferred for {args.path} in Chromium, cold (empty cache) and warm",
        "command": " ".join(["python", *sys.argv]),
        "server": " ".join(command[1:]) + " (DEBUG off, after collectstatic)",
        "data": "the demo board (manage.py seed_demo)",
        "browser": f"Chromium {version}, Playwright, viewport 1400 x 900",
        "counted": "devtools Network.loadingFinished encodedDataLength: headers and body as sent",
        "budget_bytes": BUDGET_BYTES,
        "cold": cold,
        "warm": warm,
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(
        f"{args.path}: cold {cold['bytes']:,} bytes in {cold['requests']} responses, "
        f"warm {warm['bytes']:,} bytes in {warm['requests']}; budget {BUDGET_BYTES:,}"
    )
    for resource in cold["resources"]:
        print(
            f"  {resource.get('bytes', 0):>10,}  {resource['encoding'] or '-':<5} {resource['url']}"
        )


if __name__ == "__main__":
    main()
