import pytest

from tasks.models import Task


@pytest.fixture
def synced(catalog_tasks):
    return Task.objects.get(slug="silu")


def test_task_index_lists_and_filters_by_category_and_backend(client, synced):
    html = client.get("/tasks/").content.decode()
    assert 'href="/tasks/silu/"' in html
    assert 'href="/tasks/silu/"' in client.get("/tasks/?category=torch2triton").content.decode()
    assert 'href="/tasks/silu/"' not in client.get("/tasks/?category=hard").content.decode()
    assert 'href="/tasks/silu/"' in client.get("/tasks/?backend=triton").content.decode()


def test_task_page_shows_prompt_shapes_roofline_and_reference(client, synced):
    response = client.get("/tasks/silu/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "N=67108864" in html
    # 8 bytes per element over 3350 GB/s on an H100 SXM.
    assert f"{8 * 67108864 / 3350e9 * 1e3:.4f} ms" in html
    assert "aten::silu" in html and "Triton kernel" in html
    assert 'class="highlight"' in html
    assert "generalization" not in html.lower().replace("solutions are also graded", "")


def test_unknown_task_is_a_404(client, db):
    assert client.get("/tasks/no-such-task/").status_code == 404
