"""Browser tests: Playwright driving Debian's Chromium (`make system-deps` installs it).

Each test gets a fresh page on a live server; a screenshot of every page a test visits is kept
under var/test/screenshots/ as a test artifact.
"""

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENSHOTS = Path(os.environ.get("ARENA_DATA_DIR", "var/test")) / "screenshots"

# Playwright's sync API runs an event loop in the test's thread; the ORM calls the tests make
# to set up rows are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def chromium_browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (make system-deps installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium_browser, request):
    """A page with JavaScript errors collected in `page.js_errors` (a test may assert on them)."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    yield page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(SCREENSHOTS / f"{request.node.name[:120]}.png"), full_page=True)
    finally:
        context.close()
