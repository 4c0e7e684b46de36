"""Accounts in Chromium at a desktop (1400 px) and a phone (390 px) width: sign up, see one's
name in the nav, make an API token and see its secret once, revoke it, log out; no page scrolls
sideways and no page breaks its Content-Security-Policy."""

import os
from pathlib import Path

import pytest
from django.core.cache import cache

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db(transaction=True)

WIDTHS = (1400, 390)
PASSWORD = "a-long-enough-password-42"
SHOTS = Path(os.environ.get("ARENA_ACCOUNT_SCREENSHOTS", "/tmp/arena-account-screenshots"))


@pytest.fixture
def watched(page, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()  # the live server shares this process's cache: no sign-ups counted yet
    page.refused = []
    page.on(
        "console",
        lambda m: page.refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    return page


def shot(page, name: str, width: int) -> None:
    overflow = page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )
    assert overflow <= 0, f"{name} scrolls sideways by {overflow} px at {width} px"
    page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_sign_up_make_a_token_see_it_once_and_log_out(watched, live_server, width):
    page, base = watched, live_server.url
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(base + "/")
    page.locator("header.site nav.account a:has-text('Sign up')").click()
    page.wait_for_url("**/accounts/signup/")
    shot(page, "signup", width)
    page.fill("#id_username", f"carol{width}")
    page.fill("#id_email", f"carol{width}@example.org")
    page.fill("#id_password1", PASSWORD)
    page.click("form.account-form button[type=submit]")
    page.wait_for_url("**/accounts/tokens/")
    assert page.locator("#nav-user").inner_text() == f"carol{width}"
    assert page.locator("#nav-user").is_visible()
    shot(page, "tokens-empty", width)

    page.fill("#id_name", "laptop")
    page.click("#token-create button[type=submit]")
    secret = page.locator("#new-token-secret").inner_text().strip()
    assert secret.startswith("ka_") and len(secret) == 46
    assert page.locator("#tokens tbody tr").count() == 1
    shot(page, "tokens-new", width)
    page.goto(base + "/accounts/tokens/")
    assert page.locator("#new-token-secret").count() == 0
    assert secret not in page.content()
    assert ApiToken.objects.get().prefix in page.locator("#tokens").inner_text()

    page.locator("#tokens button:has-text('Revoke')").click()
    page.wait_for_url("**/accounts/tokens/")
    assert page.locator("#no-tokens").is_visible() and not ApiToken.objects.exists()
    shot(page, "tokens-revoked", width)

    page.locator("header.site form.logout button").click()
    page.wait_for_url(base + "/")
    assert page.locator("header.site nav.account a:has-text('Log in')").is_visible()
    page.goto(base + "/accounts/login/")
    shot(page, "login", width)
    assert page.refused == []
