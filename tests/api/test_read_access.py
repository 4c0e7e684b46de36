"""Who reads what: every read endpoint and page, walked as anonymous, as another account, as
the owner and as staff, over a public graded run, a private run_kernel grading and a withdrawn
run (arena.selectors: the one rule; evaluator/redaction.py: what others see of a grading).

The walk is derived from the URL configuration: every route must be walked here or named in
NOT_READS with the reason, so an endpoint added later cannot be skipped silently.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from arena.models import Agent, Batch, Run, Submission
from arena.run_logs import run_trajectory_attach
from arena.run_scores import leaderboard_record
from arena.services import WITHDRAWN_REASON, agent_get_or_create
from bench.transcript_logs import write_codex_rollout
from evaluator.models import Evaluation, EvaluationShape
from evaluator.services import evaluation_shape_build
from tests.api.factories import client_with_token, token_create
from tests.leaderboard.factories import gate, grader_result, make_task

SECRET = "s3cr3t-marker-7f1c"
# What a compile traceback quotes: the solution's file and one of its lines.
SOURCE_LINE = 'raise RuntimeError(MARK + "-at-import")'
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "solution.py", line 3, in <module>\n'
    f"    {SOURCE_LINE}\n"
    f"RuntimeError: {SECRET}-at-import"
)
# The solution prints the marker without spelling it: the run page shows a public run's source.
CODE = 'MARK = "-".join(["s3cr3t", "marker", "7f1c"])\nprint(MARK)\nclass ModelNew: pass\n'
# Never in anyone's answer but the owners' (the source line: in no API answer at all).
WITHHELD = (SECRET, 'File "solution.py", line')

ROLES = ("anonymous", "other", "owner", "staff")
OWNERS = ("owner", "staff")


# ---- the rows ---------------------------------------------------------------------------------


def _leaky_result(task) -> dict:
    """A grading whose every solution-written field carries the marker: the printed output,
    an unseen shape's exception, the gate that quotes it, a path the solution opened."""
    result = grader_result(
        speedup=1.5, unseen=(0, 1), flags=("overfit",), shapes=task.manifest["visible_shapes"]
    )
    crash = f"runtime error: RuntimeError: {SECRET}"
    result["per_shape"][-1]["reason"] = crash
    result["gates"]["generalization"] = gate(
        False, f"incorrect on 1 of 1 unseen shapes, e.g. {{'N': 1000}}: {crash}", unseen_shapes=1
    )
    result["flags"].append(
        {"code": "file_access", "message": f"opened paths outside its folder: /tmp/{SECRET}"}
    )
    result["log"] = f"{SECRET} printed by the solution\n"
    return result


def _compile_failure() -> dict:
    result = grader_result(outcome="no_compile")
    result["gates"]["compile"] = gate(False, "did not compile", error=TRACEBACK)
    result["log"] = TRACEBACK
    return result


def _evaluation(task, result: dict, **fields) -> Evaluation:
    evaluation = Evaluation.objects.create(
        task=task,
        task_version=task.version_hash,
        solution_name="solution.py",
        solution_code=CODE,
        solution_sha256="0" * 64,
        status=result["status"],
        device=result["device"],
        reward=result["reward"],
        ranked=result["ranked"],
        result=result,
        **fields,
    )
    EvaluationShape.objects.bulk_create(
        evaluation_shape_build(evaluation=evaluation, index=i, row=row)
        for i, row in enumerate(result["per_shape"])
    )
    return evaluation


def _graded_run(agent, task, user, results: list[dict], *, batch=None, **fields) -> Run:
    run = Run.objects.create(
        agent=agent, task=task, status=Run.Status.DONE, created_by=user, **fields
    )
    for result in results:
        submission = Submission.objects.create(
            run=run, evaluation=_evaluation(task, result), batch=batch
        )
        leaderboard_record(submission_id=submission.pk)
    return run


def _reader(token=None) -> APIClient:
    """One client for the API (its token) and the pages (its session)."""
    client = client_with_token(token)
    if token is not None:
        client.force_login(token.user)
    return client


@dataclass
class World:
    public: Run
    withdrawn: Run
    private: Evaluation  # a run_kernel grading: no run
    batch: Batch
    agent: Agent
    task: object
    readers: dict[str, APIClient]

    @property
    def public_evaluation(self) -> Evaluation:
        return self.public.submissions.order_by("pk").last().evaluation


@pytest.fixture
def world(db, settings, tmp_path) -> World:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path / "data"  # the transcript pages' cache
    tokens = {name: token_create(username=name) for name in ("alice", "bob", "operator")}
    alice, operator = tokens["alice"].user, tokens["operator"].user
    operator.is_staff = True
    operator.save()
    task = make_task("reads", category="torch2triton")
    agent = agent_get_or_create(name="alice-agent", owner=alice)
    batch = Batch.objects.create(agent=agent, created_by=alice, key="k")
    public = _graded_run(agent, task, alice, [_compile_failure(), _leaky_result(task)], batch=batch)
    withdrawn = _graded_run(
        agent,
        task,
        alice,
        [_leaky_result(task)],
        batch=batch,
        hidden=True,
        hidden_reason=WITHDRAWN_REASON,
    )
    log = tmp_path / "logs" / "rollout-2025-11-20T12-00-00-demo.jsonl"
    write_codex_rollout(log, target_bytes=4_000)
    for run in (public, withdrawn):
        run_trajectory_attach(run=run, path=log)
    private = _evaluation(task, _compile_failure(), submitted_by=alice)
    readers = {
        "anonymous": _reader(),
        "other": _reader(tokens["bob"]),
        "owner": _reader(tokens["alice"]),
        "staff": _reader(tokens["operator"]),
    }
    return World(public, withdrawn, private, batch, agent, task, readers)


# ---- the walk ---------------------------------------------------------------------------------

# Routes that read no run or grading, each with the reason; and whole folders of them.
NOT_READING_FOLDERS = (
    "/admin/",  # Django's admin: staff only, behind its own login
    "/accounts/",  # signing up, logging in and out, one's tokens: no runs or gradings
)
NOT_READS = {
    "/favicon.ico": "a redirect to a static file",
    "/api/schema/": "the OpenAPI schema: no rows",
    "/api/v1/schema": "the OpenAPI schema: no rows",
    "/api/docs/": "the Swagger page: no rows",
    "/api/": "the API's JSON 404 for every path under /api/ that nothing else answers",
    "/trajectories/upload/": "the upload form: no rows",
    "/trajectories/upload/confirm/": "the upload's second step: the uploader's own held log",
    "/tasks/": "the catalogue: no runs",
    "/scoring/": "how scores are taken: no rows",
}

# url(world, kind) for each route that reads one thing: kind is "public", "private" or
# "withdrawn"; None where the route does not read that kind of thing.
Url = Callable[[World, str], str | None]


def _run_id(world: World, kind: str) -> int | None:
    return {"public": world.public.pk, "withdrawn": world.withdrawn.pk}.get(kind)


def _evaluation_id(world: World, kind: str) -> int | None:
    withdrawn = world.withdrawn.submissions.get().evaluation_id
    ids = {"public": world.public_evaluation.pk, "private": world.private.pk}
    return {**ids, "withdrawn": withdrawn}.get(kind)


def _submission_id(world: World, kind: str) -> int | None:
    run = {"public": world.public, "withdrawn": world.withdrawn}.get(kind)
    return run.submissions.order_by("pk").last().pk if run else None


def _with(template: str, ids: Callable[[World, str], int | None]) -> Url:
    def url(world: World, kind: str) -> str | None:
        value = ids(world, kind)
        return None if value is None else template.format(value)

    return url


def _compare(world: World, kind: str) -> str | None:
    run_id = _run_id(world, kind)
    return None if run_id is None else f"/compare/?a={world.public.pk}&b={run_id}"


ONE_THING: dict[str, Url] = {
    "/api/v1/evaluations/{evaluation_id}": _with("/api/v1/evaluations/{}", _evaluation_id),
    "/api/v1/submissions/{submission_id}": _with("/api/v1/submissions/{}", _submission_id),
    "/api/v1/runs/{run_id}": _with("/api/v1/runs/{}", _run_id),
    "/runs/{run_id}/": _with("/runs/{}/", _run_id),
    "/runs/{run_id}/status.json": _with("/runs/{}/status.json", _run_id),
    "/runs/{run_id}/transcript": _with("/runs/{}/transcript", _run_id),
    "/runs/{run_id}/transcript/export": _with("/runs/{}/transcript/export", _run_id),
    "/compare/": _compare,
}
# A batch is its uploader's receipt: its owners read it, nobody else, whatever its runs are.
OWNERS_ONLY: dict[str, Url] = {
    "/api/v1/batches/{batch_id}": lambda world, kind: f"/api/v1/batches/{world.batch.pk}",
    "/api/v1/batches/{batch_id}/results": (
        lambda world, kind: f"/api/v1/batches/{world.batch.pk}/results"
    ),
}
# Lists and aggregates: answer everyone; must leave out what the reader may not read.
LISTS: dict[str, Callable[[World], str]] = {
    "/": lambda world: "/",
    "/agents/": lambda world: "/agents/",
    "/agents/{slug}/": lambda world: f"/agents/{world.agent.slug}/",
    "/runs/": lambda world: "/runs/",
    "/transcripts/": lambda world: "/runs/?transcript=yes",
    "/matrix/": lambda world: "/matrix/",
    # With one agent on the board, the chooser: it lists the board's agents.
    "/compare/agents/": lambda world: f"/compare/agents/?a={world.agent.slug}",
    "/tasks/{slug}/": lambda world: f"/tasks/{world.task.slug}/",
    "/api/v1/evaluations": lambda world: "/api/v1/evaluations?limit=200",
    "/api/v1/leaderboard": lambda world: "/api/v1/leaderboard",
    "/api/v1/agents": lambda world: "/api/v1/agents",
    "/api/v1/agents/{slug}": lambda world: f"/api/v1/agents/{world.agent.slug}",
    "/api/v1/tasks": lambda world: "/api/v1/tasks",
    "/api/v1/tasks/{slug}": lambda world: f"/api/v1/tasks/{world.task.slug}",
    "/api/v1/runs": lambda world: "/api/v1/runs?limit=500",
}


def _routes(patterns, prefix: str = "") -> list[tuple[str, URLPattern]]:
    routes = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            routes += _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            routes.append(("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route).lstrip("^"), pattern))
    return routes


def _writes_only(pattern: URLPattern) -> bool:
    """An API view with no GET: a write, which reads nothing back but what it wrote."""
    view = getattr(pattern.callback, "cls", None)
    return view is not None and not hasattr(view, "get")


def test_every_route_is_walked_or_said_to_read_nothing():
    walked = {*ONE_THING, *OWNERS_ONLY, *LISTS, *NOT_READS}
    routes = {
        route
        for route, pattern in _routes(get_resolver().url_patterns)
        if not _writes_only(pattern) and not route.startswith(NOT_READING_FOLDERS)
    }
    assert routes - walked == set(), "walk these routes in this file, or say why they read nothing"
    assert walked - routes == set(), "these routes are gone: drop them from the walk"


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _get(world: World, role: str, url: str, *, reader: APIClient | None = None):
    response = (reader or world.readers[role]).get(url)
    return response.status_code, _body(response)


def _assert_withheld(body: str, where: str) -> None:
    for text in WITHHELD:
        assert text not in body, f"{where}: {text!r} was shown to a reader who does not own it"


@pytest.mark.parametrize("kind", ["public", "private", "withdrawn"])
def test_one_thing_answers_its_readers_and_404_to_the_rest(world, kind):
    for route, url_of in ONE_THING.items():
        url = url_of(world, kind)
        if url is None:
            continue
        for role in ROLES:
            status, body = _get(world, role, url)
            where = f"{role} GET {url} ({route}, {kind})"
            if kind == "public" or role in OWNERS:
                assert status == 200, f"{where}: {status} {body[:300]}"
            else:
                assert status == 404, f"{where}: {status}, not 404: {body[:300]}"
            if role not in OWNERS:
                _assert_withheld(body, where)
            if url.startswith("/api/"):
                assert SOURCE_LINE not in body, f"{where}: the API sent back source"


def test_owners_read_the_solutions_output_that_others_do_not(world):
    shown = [
        f"/api/v1/evaluations/{world.public_evaluation.pk}",
        f"/api/v1/evaluations/{world.private.pk}",
        f"/api/v1/runs/{world.public.pk}",
        f"/runs/{world.public.pk}/",
        f"/runs/{world.withdrawn.pk}/",
        f"/runs/{world.public.pk}/transcript",
        f"/api/v1/batches/{world.batch.pk}/results",
    ]
    for url in shown:
        for role in OWNERS:
            status, body = _get(world, role, url)
            assert status == 200 and SECRET in body, f"{role} GET {url}: the marker is not shown"


def test_others_read_a_public_grading_without_the_solutions_words(world):
    status, body = _get(world, "anonymous", f"/api/v1/evaluations/{world.public_evaluation.pk}")
    result = json.loads(body)["result"]
    assert status == 200 and "log" not in result
    generalization = result["gates"]["generalization"]
    assert generalization["passed"] is False and generalization["detail"] == {"unseen_shapes": 1}
    assert generalization["reason"].endswith(
        "runtime error (its message is shown to its owner only)"
    )
    assert [f["code"] for f in result["flags"]] == ["overfit", "file_access"]
    assert [row["correct"] for row in result["per_shape"]] == [True, False]
    page = _get(world, "other", f"/runs/{world.public.pk}/")[1]
    assert "output and its error messages are shown to the run's owners only" in page
    assert "did not compile" in page and "FAIL" in page  # the verdict and gates stay public


def test_a_batch_is_read_by_its_owners_alone(world):
    for route, url_of in OWNERS_ONLY.items():
        url = url_of(world, "public")
        for role in ROLES:
            status, body = _get(world, role, url)
            expected = 200 if role in OWNERS else 404
            assert status == expected, f"{role} GET {url} ({route}): {status} {body[:300]}"


def test_lists_leave_out_what_the_reader_may_not_read(world):
    hidden_runs = {world.withdrawn.pk}
    hidden_evaluations = {world.private.pk, _evaluation_id(world, "withdrawn")}
    for route, url_of in LISTS.items():
        url = url_of(world)
        for role in ("anonymous", "other"):
            status, body = _get(world, role, url)
            where = f"{role} GET {url} ({route})"
            assert status == 200, f"{where}: {status} {body[:300]}"
            _assert_withheld(body, where)
            assert f"/runs/{world.withdrawn.pk}/" not in body, f"{where}: names the withdrawn run"
            if route == "/api/v1/runs":
                assert not hidden_runs & {row["id"] for row in _results(body)}, where
            if route == "/api/v1/evaluations":
                assert not hidden_evaluations & {row["id"] for row in _results(body)}, where
    own = _results(_get(world, "owner", "/api/v1/evaluations")[1])
    assert world.private.pk in {row["id"] for row in own}  # the owner lists its own


def _results(body: str) -> list[dict]:
    return json.loads(body)["results"]


def test_a_withdrawn_run_is_no_one_elses_to_withdraw_or_to_know_of(world):
    url = f"/api/v1/runs/{world.withdrawn.pk}/withdraw"
    assert world.readers["other"].post(url).status_code == 404
    assert world.readers["owner"].post(url).status_code == 200
    public = world.readers["other"].post(f"/api/v1/runs/{world.public.pk}/withdraw")
    assert public.status_code == 403  # a public run exists for everyone: not theirs, though


def test_attaching_a_log_to_someone_elses_withdrawn_run_answers_as_for_no_run(world):
    def attach(run_id: int):
        log = SimpleUploadedFile("log.jsonl", b"{}\n")
        response = world.readers["other"].post(
            "/api/v1/trajectories", {"file": log, "run": run_id}, format="multipart"
        )
        # The id replaced in the words only, not in the whole body: run 40's would turn a
        # status of 400 into "<id>0".
        error = response.json()["error"]

        def words(text: str) -> str:
            return re.sub(rf"\b{run_id}\b", "<id>", text)

        fields = words(json.dumps(error.get("fields"), sort_keys=True))
        return response.status_code, error["status"], error["code"], words(error["message"]), fields

    assert attach(world.withdrawn.pk) == attach(987654321)
    assert attach(world.public.pk)[0] == 403  # a public run exists for everyone


def test_members_of_the_agents_organisation_read_its_runs_as_owners_do(world):
    team = Group.objects.create(name="alice-team")
    world.agent.organisation = team
    world.agent.save()
    member = token_create(username="member")
    member.user.groups.add(team)
    status, body = _get(world, "member", f"/runs/{world.withdrawn.pk}/", reader=_reader(member))
    assert status == 200 and SECRET in body
