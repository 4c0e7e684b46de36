"""Agents belong to their owners: only they (their organisation, staff) submit under them,
attach logs to their runs and withdraw them; every run records the account that made it."""

import io

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from arena.models import Agent, Run, Submission
from arena.services import WITHDRAWN_REASON, agent_get_or_create
from bench.transcript_logs import write_codex_rollout
from evaluator.models import Evaluation
from tests.api.factories import client_with_token, error_of, token_create, upload
from transcripts.models import Trajectory

SUBMIT = "/api/v1/submissions"
TRAJECTORIES = "/api/v1/trajectories"


@pytest.fixture
def alice(db):
    return token_create("alice")


@pytest.fixture
def bob(db):
    return token_create("bob")


def submit(token, agent: str):
    return client_with_token(token).post(
        SUBMIT, {"task": "silu", "agent": agent, "solution": upload()}, format="multipart"
    )


def counts() -> tuple[int, int, int, int]:
    return (
        Agent.objects.count(),
        Run.objects.count(),
        Evaluation.objects.count(),
        Submission.objects.count(),
    )


def assert_refused(response, fragment: str) -> None:
    assert response.status_code == 403, response.content
    error = error_of(response)
    assert error["code"] == "permission_denied"
    assert fragment in error["message"]


def test_an_unknown_agent_name_makes_an_agent_owned_by_the_caller(alice, catalog_tasks):
    response = submit(alice, "Alice's Agent")
    assert response.status_code == 201, response.content
    agent = Agent.objects.get(slug="alices-agent")
    assert agent.owner == alice.user
    run = Run.objects.get(pk=response.json()["run"])
    assert (run.created_by, run.source) == (alice.user, Run.Source.UPLOAD)


def test_another_account_cannot_submit_under_an_agent_it_does_not_own(alice, bob, catalog_tasks):
    assert submit(alice, "alice-agent").status_code == 201
    before = counts()
    response = submit(bob, "Alice Agent")  # the same slug, however it is spelled
    assert_refused(response, "'alice-agent' belongs to another account")
    assert counts() == before  # nothing written
    assert not Run.objects.filter(created_by=bob.user).exists()


def test_a_member_of_the_agents_organisation_may_submit(alice, bob, catalog_tasks):
    assert submit(alice, "team-agent").status_code == 201
    team = Group.objects.create(name="team")
    bob.user.groups.add(team)
    Agent.objects.filter(slug="team-agent").update(organisation=team)
    response = submit(bob, "team-agent")
    assert response.status_code == 201, response.content
    assert Run.objects.get(pk=response.json()["run"]).created_by == bob.user


def test_only_staff_submit_under_a_platform_agent(bob, catalog_tasks, django_user_model):
    agent_get_or_create(name="claude-code")  # no owner: the platform's
    assert_refused(submit(bob, "claude-code"), "run by the platform; only staff")
    staff = token_create("moderator")
    django_user_model.objects.filter(pk=staff.user.pk).update(is_staff=True)
    assert submit(staff, "claude-code").status_code == 201
    assert submit(staff, "alices-private-agent").status_code == 201  # staff own what they make


@pytest.fixture
def codex_log(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path / "data"
    path = tmp_path / "rollout-2025-11-20T12-00-00-demo.jsonl"
    write_codex_rollout(path, target_bytes=20_000)
    return path


def attach(token, codex_log, **fields):
    log = io.BytesIO(codex_log.read_bytes())
    log.name = codex_log.name
    return client_with_token(token).post(TRAJECTORIES, {"file": log, **fields})


def test_only_the_runs_owner_attaches_a_log_to_it(alice, bob, catalog_tasks, codex_log):
    run_id = submit(alice, "alice-agent").json()["run"]
    refused = attach(bob, codex_log, run=run_id)
    assert_refused(refused, f"run {run_id} is not yours")
    assert not Trajectory.objects.exists()
    assert Run.objects.get(pk=run_id).trajectory_id is None
    accepted = attach(alice, codex_log, run=run_id)
    assert accepted.status_code == 201, accepted.content
    assert Run.objects.get(pk=run_id).trajectory_id is not None


def test_a_log_for_a_new_run_is_refused_under_someone_elses_agent(
    alice, bob, catalog_tasks, codex_log
):
    submit(alice, "alice-agent")
    before = counts()
    refused = attach(bob, codex_log, agent="alice-agent", task="silu")
    assert_refused(refused, "belongs to another account")
    assert counts() == before and not Trajectory.objects.exists()
    made = attach(bob, codex_log, agent="bobs-agent", task="silu")
    assert made.status_code == 201, made.content
    run = Run.objects.get(pk=made.json()["run"])
    assert (run.created_by, run.agent.owner) == (bob.user, bob.user)


def test_only_the_owner_withdraws_a_run_and_it_leaves_the_public_pages(alice, bob, catalog_tasks):
    run_id = submit(alice, "alice-agent").json()["run"]
    page = Client()
    assert page.get(f"/runs/{run_id}/").status_code == 200
    refused = client_with_token(bob).post(f"/api/v1/runs/{run_id}/withdraw")
    assert_refused(refused, f"run {run_id} is not yours to withdraw")
    assert Run.objects.get(pk=run_id).hidden is False
    withdrawn = client_with_token(alice).post(f"/api/v1/runs/{run_id}/withdraw")
    assert withdrawn.status_code == 200, withdrawn.content
    assert withdrawn.json() == {"id": run_id, "hidden": True, "hidden_reason": WITHDRAWN_REASON}
    assert page.get(f"/runs/{run_id}/").status_code == 404
    listed = Client().get("/api/v1/runs").json()
    assert run_id not in [row["id"] for row in listed["results"]]
    missing = client_with_token(alice).post("/api/v1/runs/999999/withdraw")
    assert missing.status_code == 404


def test_a_moderators_reason_stays_when_the_owner_withdraws(alice, catalog_tasks):
    run_id = submit(alice, "alice-agent").json()["run"]
    Run.objects.filter(pk=run_id).update(hidden=True, hidden_reason="spam")
    response = client_with_token(alice).post(f"/api/v1/runs/{run_id}/withdraw")
    assert response.json()["hidden_reason"] == "spam"


def test_the_run_page_tells_an_upload_from_an_arena_run(alice, catalog_tasks):
    run_id = submit(alice, "alice-agent").json()["run"]
    arena_run = Run.objects.create(
        agent=Agent.objects.create(slug="scripted", name="scripted"),
        task=Run.objects.get(pk=run_id).task,
        source=Run.Source.ARENA,
    )
    uploaded = Client().get(f"/runs/{run_id}/").content.decode()
    assert 'class="origin origin-upload"' in uploaded
    assert "Uploaded by alice" in uploaded
    arena = Client().get(f"/runs/{arena_run.pk}/").content.decode()
    assert 'class="origin origin-arena"' in arena
    assert "Arena run: the platform ran the agent" in arena
    listed = {row["id"]: row for row in Client().get("/api/v1/runs").json()["results"]}
    assert (listed[run_id]["source"], listed[run_id]["created_by"]) == ("upload", "alice")
    assert (listed[arena_run.pk]["source"], listed[arena_run.pk]["created_by"]) == ("arena", None)
