"""Every kind of page in Chromium under its Content-Security-Policy: the policy is sent, and
nothing of ours is refused by it (no blocked script, stylesheet, inline style, eval or request),
plotly's figures, Swagger UI and the admin included.

One live server and one browser page walk all the pages; each page's refusals are collected from
the console and from `securitypolicyviolation` events, and the test reports them by page.
"""

from __future__ import annotations

import json
import re

import pytest
from django.core.cache import cache

from arena.run_logs import trajectory_upload
from tests.browser.conftest import SCREENSHOTS
from tests.leaderboard.factories import make_agent, make_run, make_task

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "pw-for-the-csp-walk-1"

# Runs in every document before its own scripts; the devtools protocol puts it there, so the
# page's policy does not apply to it.
LISTEN_FOR_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) => {
  window.reportViolation(`${e.effectiveDirective} refused ${e.blockedURI || "inline"}`
    + ` at ${e.sourceFile || document.URL}:${e.lineNumber} (${e.sample || ""})`);
});
"""


@pytest.fixture
def site(settings, tmp_path, django_user_model):
    """A board with ranked runs, a queued run, a transcript, and a staff account."""
    cache.clear()  # the live server runs in this process and shares its cache
    settings.MEDIA_ROOT = tmp_path / "media"
    task = make_task("csp-silu")
    fast, slow = make_agent("fast-agent", name="Fast Agent"), make_agent("slow-agent")
    graded = make_run(fast, task, speedup=2.0, unseen=(2, 2), tokens=900, cost_usd=1.0)
    other = make_run(slow, task, speedup=1.2, flags=("overfit",), unseen=(0, 2), cost_usd=0.4)
    queued = make_run(make_agent("waiting"), task, status="queued")
    log = [{"role": "user", "content": "Write the kernel."}, {"role": "assistant", "content": "Ok"}]
    trajectory_upload(data=json.dumps(log).encode(), filename="chat.json", run_id=graded.pk)
    django_user_model.objects.create_user("staff", password=PASSWORD, is_staff=True)
    django_user_model.objects.create_superuser("admin", password=PASSWORD)
    return {"task": task, "graded": graded, "other": other, "queued": queued}


@pytest.fixture
def watched(page):
    """The test's page, with every refusal by a Content-Security-Policy kept in page.refused."""
    page.refused = []
    page.expose_function("reportViolation", lambda text: page.refused.append(text))
    page.add_init_script(LISTEN_FOR_VIOLATIONS)
    page.on(
        "console",
        lambda m: page.refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return page


def visit(page, url: str, *, name: str, ready: str = "", status: int = 200) -> list[str]:
    """Open `url`, wait until it is drawn, and return what the policy refused on it."""
    page.refused.clear()
    response = page.goto(url)
    assert response.status == status, url
    policy = response.headers.get("content-security-policy", "")
    assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy, url
    if ready:
        page.wait_for_selector(ready, timeout=20_000)
    page.wait_for_load_state("load")
    page.wait_for_timeout(150)  # a violation event is dispatched after the refusal
    page.screenshot(path=str(SCREENSHOTS / f"csp-{name}.png"), full_page=True)
    return list(page.refused)


def log_in(page, base: str, username: str, then: str) -> None:
    page.goto(f"{base}/accounts/login/?next={then}")
    page.fill("#id_login", username)
    page.fill("#id_password", PASSWORD)
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"**{then}")


def test_no_page_breaks_its_content_security_policy(watched, live_server, site):
    page, base = watched, live_server.url
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    graded, other, task = site["graded"], site["other"], site["task"]
    plot = "svg.main-svg"
    public = [
        ("board", "/", "#plot-speedup " + plot),
        ("runs", "/runs/", ""),
        ("agents", "/agents/", ""),
        ("agent", "/agents/fast-agent/", ""),
        ("matrix", "/matrix/", ""),
        ("scoring", "/scoring/", ""),
        ("transcripts", "/transcripts/", ""),
        ("run", f"/runs/{graded.pk}/", ".highlight"),
        ("queued-run", f"/runs/{site['queued'].pk}/", "#live-status"),
        ("transcript", f"/runs/{graded.pk}/transcript", "#search"),
        ("tasks", "/tasks/", ""),
        ("task", f"/tasks/{task.slug}/", "#plot-roofline " + plot),
        ("compare", f"/compare/?a={graded.pk}&b={other.pk}", "section.side"),
        ("login", "/accounts/login/", "#id_login"),
        ("signup", "/accounts/signup/", "#id_username"),
        ("api-docs", "/api/docs/", ".opblock"),
        ("admin-login", "/admin/login/", "#id_username"),
    ]
    refused = {name: visit(page, base + url, name=name, ready=ready) for name, url, ready in public}
    page.goto(base + "/")
    box = page.locator("#plot-speedup svg.main-svg").first.bounding_box()
    page.refused.clear()
    for step in range(1, 20):  # across the bars: plotly's hover labels and cursor styles
        page.mouse.move(box["x"] + box["width"] * step / 20, box["y"] + box["height"] / 2)
    refused["board-hover"] = list(page.refused)
    refused["404"] = visit(page, base + "/no-such-page/", name="404", status=404)

    log_in(page, base, "staff", "/trajectories/upload/")
    refused["upload"] = visit(page, base + "/trajectories/upload/", name="upload", ready="#id_file")
    refused["tokens"] = visit(page, base + "/accounts/tokens/", name="tokens", ready="form")
    page.context.clear_cookies()
    log_in(page, base, "admin", "/admin/")
    staff = [
        ("admin", "/admin/", "#content-main"),
        ("admin-runs", "/admin/arena/run/", "#changelist"),
        ("admin-run", f"/admin/arena/run/{graded.pk}/change/", "#content-main form"),
        ("admin-add-agent", "/admin/arena/agent/add/", "#content-main form"),
    ]
    for name, url, ready in staff:
        refused[name] = visit(page, base + url, name=name, ready=ready)

    report = [f"{name}: {text}" for name, found in refused.items() for text in found]
    assert report == [], "\n".join(report)
    assert page.js_errors == []


def test_the_transcript_page_keeps_its_own_stricter_policy(watched, live_server, site):
    response = watched.goto(f"{live_server.url}/runs/{site['graded'].pk}/transcript")
    policy = response.headers["content-security-policy"]
    assert re.search(r"script-src 'sha256-[^' ]+'", policy) and "default-src 'none'" in policy
    assert "'nonce-" not in policy and "'self'" not in policy
    watched.wait_for_selector("#search")
    assert watched.refused == [] and watched.js_errors == []
