"""Launching runs: task selectors, the launch_runs command and the launch API."""

import io

import pytest
from django.core.management import CommandError, call_command

from arena.models import Agent, Run
from arena.runs import tasks_select
from tasks.models import Task
from tests.api.factories import client_with_token, error_of, token_create
from tests.arena.runs.conftest import make_agent

pytestmark = pytest.mark.django_db(transaction=True)


def staff_client():
    token = token_create(username="operator")
    token.user.is_staff = True
    token.user.save()
    return client_with_token(token)


def test_selectors_take_slugs_globs_categories_and_all(catalog_tasks):
    assert [t.slug for t in tasks_select(selector="tt-vector-add")] == ["tt-vector-add"]
    globbed = {t.slug for t in tasks_select(selector="tt-*")}
    assert "tt-vector-add" in globbed and all(s.startswith("tt-") for s in globbed)
    category = tasks_select(selector="category:triton2triton")
    assert category and {t.category for t in category} == {"triton2triton"}
    assert len(tasks_select(selector="all")) == Task.objects.filter(is_active=True).count()
    both = tasks_select(selector="tt-vector-add, tt-*")
    assert len(both) == len(globbed)  # each task once


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("no-such-task", "tasks: 'no-such-task' matches no active task"),
        ("zz-*", "tasks: 'zz-*' matches no active task"),
        ("category:fortran", "tasks: 'category:fortran' matches no active task"),
        (" , ", "tasks: give slugs, globs like tt-*, category:<name> or all"),
    ],
)
def test_selectors_that_match_nothing_are_named(catalog_tasks, selector, message):
    with pytest.raises(ValueError) as raised:
        tasks_select(selector=selector)
    assert str(raised.value) == message


def test_launch_runs_queues_the_runs_and_returns_with_no_wait(run_queues, catalog_tasks):
    out = io.StringIO()
    call_command(
        "launch_runs",
        "--agent=scripted-weak",
        "--tasks=tt-vector-add,tt-row-max",
        "--repeats=2",
        '--budget={"wall_clock_s": 600, "max_turns": 40}',
        "--no-wait",
        stdout=out,
    )
    runs = list(Run.objects.order_by("pk"))
    assert len(runs) == 4
    assert sorted(r.task.slug for r in runs) == ["tt-row-max"] * 2 + ["tt-vector-add"] * 2
    assert {(r.status, r.source) for r in runs} == {("queued", "arena")}
    assert runs[0].budget["wall_clock_s"] == 600 and runs[0].budget["max_turns"] == 40
    agent = Agent.objects.get(slug="scripted-weak")
    assert (agent.harness, agent.config) == ("scripted", {"strategy": "weak"})
    assert out.getvalue().strip() == (
        f"launch_runs: 4 runs of scripted-weak queued (ids {runs[0].pk}..{runs[-1].pk})"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent=nobody", "--tasks=tt-vector-add"], "agent: no agent 'nobody'"),
        (["--agent=scripted-weak", "--tasks=zz-*"], "tasks: 'zz-*' matches no active task"),
        (
            ["--agent=scripted-weak", "--tasks=tt-vector-add", '--budget={"max_turns": -1}'],
            "budget.max_turns: must be positive, not -1",
        ),
        (
            ["--agent=scripted-weak", "--tasks=tt-vector-add", "--repeats=0"],
            "repeats: must be at least 1",
        ),
    ],
)
def test_launch_runs_names_what_is_wrong_and_queues_nothing(
    run_queues, catalog_tasks, args, message
):
    with pytest.raises(CommandError) as raised:
        call_command("launch_runs", *args, "--no-wait", stdout=io.StringIO())
    assert str(raised.value).startswith(message)
    assert not Run.objects.exists()
    assert not Agent.objects.exists()


def test_launch_runs_follows_the_runs_in_a_table_until_they_finish(run_queues, catalog_tasks):
    # No worker serves this test's queues: the table shows the run queued until --timeout.
    make_agent("never-started", "command", template="true")
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"stopped following after 1\.5 s; the runs go on"):
        call_command(
            "launch_runs",
            "--agent=never-started",
            "--tasks=tt-vector-add",
            "--timeout=1.5",
            stdout=out,
        )
    text = out.getvalue()
    assert "Arena runs" in text and "tt-vector-add" in text and "queued" in text
    assert "launch_runs: 1 queued" in text


def test_the_launch_api_needs_a_staff_token(run_queues, catalog_tasks):
    body = {"agent": "scripted-weak", "tasks": "tt-vector-add"}
    anonymous = client_with_token().post("/api/v1/runs/launch", body, format="json")
    assert anonymous.status_code == 401
    not_staff = client_with_token(token_create(username="someone")).post(
        "/api/v1/runs/launch", body, format="json"
    )
    assert not_staff.status_code == 403
    assert error_of(not_staff)["code"] == "permission_denied"
    assert not Run.objects.exists()


def test_the_launch_api_queues_runs_and_answers_with_them(run_queues, catalog_tasks):
    response = staff_client().post(
        "/api/v1/runs/launch",
        {
            "agent": "scripted-starter",
            "tasks": "tt-vector-add",
            "repeats": 3,
            "budget": {"wall_clock_s": 900},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    runs = response.json()["runs"]
    assert len(runs) == 3
    assert {(r["task"], r["agent"], r["status"]) for r in runs} == {
        ("tt-vector-add", "scripted-starter", "queued")
    }
    assert runs[0]["budget"]["wall_clock_s"] == 900
    assert (runs[0]["model"], runs[0]["protected_changed"]) == ("scripted", [])
    assert runs[0]["url"] == f"/runs/{runs[0]['id']}/"
    assert Run.objects.filter(status="queued").count() == 3


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"tasks": "tt-vector-add"}, "agent", "This field is required."),
        ({"agent": "nobody", "tasks": "tt-vector-add"}, "agent", "no agent 'nobody'"),
        ({"agent": "scripted-weak", "tasks": "zz-*"}, "tasks", "'zz-*' matches no active task"),
        ({"agent": "scripted-weak", "tasks": "all", "repeats": 0}, "repeats", "greater than"),
        (
            {"agent": "scripted-weak", "tasks": "tt-vector-add", "budget": {"turns": 3}},
            "budget",
            "budget.turns: unknown field",
        ),
        (
            {"agent": "scripted-weak", "tasks": "tt-vector-add", "budget": [1]},
            "budget",
            "a JSON object is needed",
        ),
        (
            {"agent": "scripted-weak", "tasks": "all", "repeats": 100},
            "repeats",
            "at most 500 per launch",
        ),
    ],
)
def test_the_launch_api_names_the_bad_field(run_queues, catalog_tasks, body, field, message):
    response = staff_client().post("/api/v1/runs/launch", body, format="json")
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert field in error["fields"], error
    assert message in " ".join(error["fields"][field]), error
    assert not Run.objects.exists()
    assert not Agent.objects.exists()  # not even the scripted agent named in the input


def test_the_cancel_api_cancels_a_queued_run_once(run_queues, catalog_tasks):
    client = staff_client()
    launched = client.post(
        "/api/v1/runs/launch", {"agent": "scripted-weak", "tasks": "tt-vector-add"}, format="json"
    ).json()["runs"][0]
    cancelled = client.post(f"/api/v1/runs/{launched['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = client.post(f"/api/v1/runs/{launched['id']}/cancel")
    assert again.status_code == 409
    assert "is cancelled" in error_of(again)["message"]
    assert client.post("/api/v1/runs/999999/cancel").status_code == 404


def test_an_agent_with_a_bad_config_is_refused_before_any_run(run_queues, catalog_tasks):
    make_agent("half-made", "command")  # no template
    response = staff_client().post(
        "/api/v1/runs/launch", {"agent": "half-made", "tasks": "tt-vector-add"}, format="json"
    )
    assert response.status_code == 400
    assert "option 'template'" in " ".join(error_of(response)["fields"]["agent"])
