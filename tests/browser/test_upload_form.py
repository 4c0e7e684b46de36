"""The upload form on a 390 px phone: a task chosen from the list, a refusal shown beside the
file, and no horizontal scroll of the page, even with long task names."""

import pytest

from arena.models import Run
from tests.leaderboard.factories import make_task

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
EMPTY_RUN = b'{"type":"system","subtype":"init","session_id":"x","tools":[],"model":"m"}\n'


def overflow_px(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


@pytest.fixture
def logged_in(page, live_server, django_user_model):
    django_user_model.objects.create_user("staff", password="pw-for-the-form-1", is_staff=True)
    page.goto(live_server.url + "/admin/login/?next=/trajectories/upload/")
    page.fill("#id_username", "staff")
    page.fill("#id_password", "pw-for-the-form-1")
    page.click("input[type=submit]")
    page.wait_for_url("**/trajectories/upload/")
    return page


def test_the_upload_form_fits_a_phone_and_shows_a_refusal_beside_the_file(logged_in, live_server):
    page = logged_in
    long = make_task("level3/" + "fused_attention_with_rotary_embedding_" * 3)
    long.title = "Fused attention with rotary embeddings, causal mask and dropout " * 2
    long.save()
    make_task("t1")
    page.set_viewport_size(PHONE)
    page.goto(live_server.url + "/trajectories/upload/")
    assert page.locator("select#id_task optgroup").count() >= 1
    assert overflow_px(page) <= 0

    page.set_input_files(
        "#id_file", {"name": "empty.jsonl", "mimeType": "text/plain", "buffer": EMPTY_RUN}
    )
    page.fill("#id_agent", "Phone Agent")
    page.select_option("#id_task", long.slug)
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("#errors-file")
    assert "read as claude-code-stream-json, but it holds no messages" in (
        page.locator("#errors-file").inner_text()
    )
    assert page.locator("#id_task").input_value() == long.slug
    assert overflow_px(page) <= 0
    assert not Run.objects.exists()
    assert page.js_errors == []
