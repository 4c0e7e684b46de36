"""The documentation page in Chromium: every operation listed, nothing fetched from elsewhere."""

import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_swagger_ui_lists_every_operation_from_local_assets(page, live_server):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock", timeout=20_000)
    operations = page.locator(".opblock-summary-path").all_inner_texts()
    paths = {text.replace("\u200b", "").strip() for text in operations}
    assert {"/api/v1/evaluations", "/api/v1/evaluations/{evaluation_id}"} <= paths, paths
    assert "/api/v1/submissions" in paths
    assert page.js_errors == []
    outside = [url for url in requested if not url.startswith(live_server.url)]
    assert outside == [], outside
    # Swagger UI's bundle as collected: named by its content's hash.
    assert any(re.search(r"/swagger-ui-bundle\.[0-9a-f]{12}\.js$", url) for url in requested)
    assert page.get_by_text("Every 4xx", exact=False).count() >= 1
