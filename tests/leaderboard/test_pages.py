import pytest
from django.utils import timezone

from arena.models import Agent, Run, Submission
from evaluator.models import Evaluation, EvaluationShape
from tasks.models import Task

HOSTILE = '# </pre><script>alert("x")</script>\nclass ModelNew: pass\n'


@pytest.fixture
def graded_run(catalog_tasks):
    task = Task.objects.get(slug="silu")
    agent = Agent.objects.create(slug="evil-agent", name='<img src=x onerror="alert(1)">')
    run = Run.objects.create(agent=agent, task=task, status=Run.Status.DONE)
    evaluation = Evaluation.objects.create(
        task=task,
        task_version=task.version_hash,
        solution_code=HOSTILE,
        solution_sha256="0" * 64,
        status="failed",
        reward=-2.0,
        finished_at=timezone.now(),
        device="cpu",
        result={
            "gates": {
                "compile": {"passed": True, "reason": "imported", "detail": {}},
                "correctness": {
                    "passed": False,
                    "reason": "incorrect on shape N=4096",
                    "detail": {"error": "<b>trace</b>"},
                },
            },
            "flags": [],
            "log": "<script>log()</script>",
        },
    )
    EvaluationShape.objects.create(
        evaluation=evaluation,
        index=0,
        shape={"N": 4096},
        correct=False,
        reason="seed 0: wrong",
        max_abs_err=0.278,
    )
    Submission.objects.create(run=run, evaluation=evaluation)
    return run


def test_index_lists_graded_submissions_with_links_to_runs(client, graded_run):
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'href="/runs/{graded_run.pk}/"' in html
    assert "silu" in html and "failed" in html


def test_run_page_shows_gates_shapes_and_escaped_solution(client, graded_run):
    response = client.get(f"/runs/{graded_run.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "incorrect on shape N=4096" in html
    assert "N=4096" in html and "2.78e-01" in html
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert 'onerror="alert(1)"' not in html
    assert 'class="highlight"' in html


def test_unknown_run_is_a_404(client, db):
    assert client.get("/runs/999999/").status_code == 404


def test_pages_load_only_local_assets(client, graded_run):
    html = client.get(f"/runs/{graded_run.pk}/").content.decode()
    assert "http://" not in html.replace("http://testserver", "")
    assert "https://" not in html
    css = client.get("/static/css/arena.css")
    assert css.status_code == 200
