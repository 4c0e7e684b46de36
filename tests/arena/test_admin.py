"""The admin: every registered model's list and change pages open, filters and search work,
moderation hides a run from the public pages, and API tokens are listed and revoked there."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.models import ApiToken
from accounts.services import api_token_create
from arena.models import Run, Submission
from arena.services import submission_create
from evaluator.models import Evaluation, EvaluationShape
from tasks.models import Task
from tests.api.factories import client_with_token, token_for
from transcripts.models import Trajectory

H200 = "NVIDIA H200"


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", "root@example.org", "x" * 20)


@pytest.fixture
def staff(client, superuser):
    client.force_login(superuser)
    return client


def graded_submission(*, agent: str, gpu: str | None) -> Submission:
    submission = submission_create(
        task=Task.objects.get(slug="silu"),
        agent_name=agent,
        solution_name="s.py",
        solution_code="class ModelNew: pass\n",
    )
    environment = {"gpu": gpu, "cuda": "12.8"} if gpu else {"cuda": None}
    Evaluation.objects.filter(pk=submission.evaluation_id).update(
        status="passed",
        device="cuda" if gpu else "cpu",
        reward=1.3,
        ranked=True,
        result={"status": "passed", "environment": environment},
    )
    EvaluationShape.objects.create(
        evaluation_id=submission.evaluation_id, index=0, shape={"N": 4096}, correct=True
    )
    Run.objects.filter(pk=submission.run_id).update(status="done")
    return submission


@pytest.fixture
def rows(catalog_tasks, superuser):
    gpu = graded_submission(agent="Scripted GPU", gpu=H200)
    cpu = graded_submission(agent="Scripted CPU", gpu=None)
    trajectory = Trajectory.objects.create(format="claude-code", filename="log.jsonl")
    Run.objects.filter(pk=gpu.run_id).update(trajectory=trajectory)
    api_token_create(user=superuser, name="laptop")
    return {"gpu": gpu, "cpu": cpu}


def change_url(model, obj) -> str:
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])


def test_every_registered_models_list_and_change_page_open(staff, rows):
    required = {"task", "agent", "run", "submission", "evaluation", "trajectory", "apitoken"}
    registered = {model._meta.model_name for model in admin.site._registry}
    assert required <= registered, required - registered
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        changelist = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        response = staff.get(changelist)
        assert response.status_code == 200, changelist
        if model_admin.search_fields:
            assert staff.get(changelist, {"q": "silu"}).status_code == 200, changelist
        obj = model._default_manager.first()
        if meta.model_name in required:
            assert obj is not None, f"no {meta.model_name} row to open"
        if obj is not None:
            url = change_url(model, obj)
            assert staff.get(url).status_code == 200, url


def results_of(response) -> list:
    return list(response.context["cl"].result_list)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"status__exact": "done"}, {"gpu", "cpu"}),
        ({"hidden__exact": "1"}, set()),
        ({"task__category__exact": "torch2triton"}, {"gpu", "cpu"}),
        ({"task__category__exact": "hard"}, set()),
        ({"gpu": H200}, {"gpu"}),
        ({"gpu": "cpu"}, {"cpu"}),
        ({"q": "scripted-gpu"}, {"gpu"}),
        ({"q": "silu"}, {"gpu", "cpu"}),
    ],
)
def test_run_list_filters_and_search(staff, rows, query, expected):
    response = staff.get(reverse("admin:arena_run_changelist"), query)
    assert response.status_code == 200
    runs = {run.pk for run in results_of(response)}
    assert runs == {rows[name].run_id for name in expected}


def test_evaluation_list_filters_by_gpu_and_ranked(staff, rows):
    url = reverse("admin:evaluator_evaluation_changelist")
    on_h200 = results_of(staff.get(url, {"gpu": H200}))
    assert [e.pk for e in on_h200] == [rows["gpu"].evaluation_id]
    assert len(results_of(staff.get(url, {"ranked__exact": "1"}))) == 2
    assert H200 in staff.get(url).content.decode()  # offered as a filter choice


def hide(staff, run_ids, reason: str = "copied a known solution"):
    return staff.post(
        reverse("admin:arena_run_changelist"),
        {"action": "hide_from_public_pages", "_selected_action": run_ids, "reason": reason},
        follow=True,
    )


@pytest.mark.django_db(transaction=True)
def test_hiding_a_run_takes_it_off_the_public_api_and_drops_the_caches(staff, rows):
    from arena.models import LeaderboardGeneration

    def generation() -> int:
        row = LeaderboardGeneration.objects.filter(pk=1).first()
        return row.value if row else 0

    run_id = rows["gpu"].run_id
    public = client_with_token(None)
    assert public.get(f"/api/v1/runs/{run_id}").status_code == 200
    before = generation()
    response = hide(staff, [run_id])
    assert "1 run(s) hidden from public pages." in response.content.decode()
    run = Run.objects.get(pk=run_id)
    assert (run.hidden, run.hidden_reason) == (True, "copied a known solution")
    assert generation() > before
    assert public.get(f"/api/v1/runs/{run_id}").status_code == 404
    assert not Run.objects.get(pk=rows["cpu"].run_id).hidden

    shown_at = generation()
    staff.post(
        reverse("admin:arena_run_changelist"),
        {"action": "show_on_public_pages", "_selected_action": [run_id]},
    )
    run = Run.objects.get(pk=run_id)
    assert (run.hidden, run.hidden_reason) == (False, "")
    assert generation() > shown_at
    assert public.get(f"/api/v1/runs/{run_id}").status_code == 200


def test_hiding_needs_a_reason(staff, rows):
    response = hide(staff, [rows["gpu"].run_id], reason="  ")
    assert "Give a reason to hide runs." in response.content.decode()
    assert not Run.objects.filter(hidden=True).exists()


def test_visibility_is_not_edited_on_the_change_form(staff, rows):
    response = staff.get(reverse("admin:arena_run_change", args=[rows["gpu"].run_id]))
    assert 'name="hidden"' not in response.content.decode()


def test_api_tokens_are_revoked_in_the_admin_and_never_made_there(staff, catalog_tasks):
    uploader = get_user_model().objects.create_user("uploader", password="x" * 20)
    token = token_for(uploader, name="laptop")
    row = ApiToken.objects.get(user=uploader)
    index = staff.get(reverse("admin:index")).content.decode()
    assert reverse("admin:accounts_apitoken_changelist") in index
    listed = staff.get(reverse("admin:accounts_apitoken_changelist"), {"q": "uploader"})
    assert f"{row.prefix}…" in listed.content.decode() and token.key not in listed.content.decode()
    # The secret can be shown only where it is made: the owner's page or `token_create`.
    assert staff.get(reverse("admin:accounts_apitoken_add")).status_code == 403

    write = {"task": "silu", "solution": "x = 1"}
    assert client_with_token(token).post("/api/v1/evaluations", write).status_code == 201
    delete = reverse("admin:accounts_apitoken_delete", args=[row.pk])
    assert staff.post(delete, {"post": "yes"}).status_code == 302
    assert client_with_token(token).post("/api/v1/evaluations", write).status_code == 401


def test_people_without_staff_rights_are_sent_to_the_login(client, db):
    user = get_user_model().objects.create_user("visitor", password="x" * 20)
    client.force_login(user)
    response = client.get(reverse("admin:arena_run_changelist"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))
