"""The OpenAPI schema covers every endpoint under /api/v1/ and every response matches it.

The endpoints are found from the URL configuration, not listed by hand, so an endpoint added
later is walked too: its GETs must answer real rows in the documented shape, its errors the
one error shape.
"""

import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import jsonschema
import pytest
from django.contrib.staticfiles.storage import staticfiles_storage
from django.urls import URLPattern, URLResolver, get_resolver

from arena.api_runs import LaunchedRunOutputSerializer
from arena.lifecycle import submission_evaluate
from arena.models import Agent, Batch, Run, Submission
from arena.services import submission_create
from evaluator.models import Evaluation
from leaderboard.api import RunOutputSerializer
from tasks.models import Task
from tests.api.factories import client_with_token, token_create
from tests.leaderboard.factories import make_run
from transcripts.models import Trajectory

API_PREFIX = "/api/v1/"
NOT_OPERATIONS = {"/api/v1/schema"}  # the schema itself


def url_templates(patterns, prefix: str = "") -> set[str]:
    """Every route of the URL configuration, as OpenAPI path templates: /a/<int:id> -> /a/{id}."""
    templates = set()
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            templates |= url_templates(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            templates.add("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route).lstrip("^"))
    return templates


def api_templates() -> set[str]:
    routes = url_templates(get_resolver().url_patterns)
    return {route for route in routes if route.startswith(API_PREFIX)} - NOT_OPERATIONS


def openapi_to_jsonschema(node, *, strict: bool = True):
    """OpenAPI 3.0 schema objects -> JSON Schema: `nullable` becomes a null type, and objects
    with declared properties refuse undeclared ones (an undocumented field is schema drift)."""
    if isinstance(node, list):
        return [openapi_to_jsonschema(item, strict=strict) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: openapi_to_jsonschema(value, strict=strict) for key, value in node.items()}
    if strict and "properties" in node and "additionalProperties" not in node:
        node["additionalProperties"] = False
    if node.pop("nullable", False):
        if "type" in node:
            node["type"] = [node["type"], "null"]
            if "enum" in node:
                node["enum"] = [*node["enum"], None]
        else:
            node = {"anyOf": [node, {"type": "null"}]}
    return node


class Schema:
    def __init__(self, document: dict):
        self.document = document
        self.components = openapi_to_jsonschema(document["components"])

    def operations(self, method: str) -> list[tuple[str, dict]]:
        return [
            (path, ops[method])
            for path, ops in self.document["paths"].items()
            if path.startswith(API_PREFIX) and method in ops
        ]

    def check(self, operation: dict, response) -> None:
        """The response's body against the schema documented for its status."""
        responses = operation["responses"]
        status = str(response.status_code)
        documented = responses.get(status) or responses.get(f"{status[0]}XX")
        assert documented, f"{operation['operationId']}: status {status} is not documented"
        if response.status_code == 204:
            return
        assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
        schema = documented["content"]["application/json"]["schema"]
        root = {**openapi_to_jsonschema(schema), "components": self.components}
        try:
            jsonschema.Draft202012Validator(root).validate(response.json())
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path)
            pytest.fail(f"{operation['operationId']} {status} at {where!r}: {exc.message}")


@pytest.fixture
def schema(anonymous, db) -> Schema:
    response = anonymous.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return Schema(json.loads(response.content))


@pytest.fixture
def graded_rows(catalog_tasks, settings, token):
    """One of each kind of row, graded for real by the grader on the CPU."""
    settings.ARENA_GRADER_DEVICE = "cpu"
    code = (settings.BASE_DIR / "tests/evaluator/solutions/silu_triton.py").read_text()
    task = Task.objects.get(slug="silu")
    submission = submission_create(
        task=task, agent_name="Schema Walker", solution_name="s.py", solution_code=code
    )
    # The write path a grading worker takes: graded, the run closed, the score recorded.
    evaluation = submission_evaluate(submission_id=submission.pk)
    assert evaluation is not None and evaluation.status == "passed", evaluation
    assert Run.objects.get(pk=submission.run_id).status == Run.Status.DONE
    trajectory = Trajectory.objects.create(format="claude-code", summary={})
    Run.objects.filter(pk=submission.run_id).update(trajectory=trajectory)
    batch = Batch.objects.create(agent=submission.run.agent, key="schema-walk")
    Submission.objects.filter(pk=submission.pk).update(batch=batch)
    # A CPU grading is never ranked: the leaderboard's rows need a run graded on a GPU, shaped
    # like the grader's GPU results (the leaderboard tests' factory).
    make_run(Agent.objects.get(pk=submission.run.agent_id), task, speedup=1.7)
    return {
        "batches": batch,
        "evaluations": Evaluation.objects.get(pk=evaluation.pk),
        "submissions": submission,
        "runs": Run.objects.get(pk=submission.run_id),
        "agents": Agent.objects.get(pk=submission.run.agent_id),
        "tasks": task,
        "trajectories": trajectory,
        "users": token.user,
    }


def fill(path: str, operation: dict, rows: dict, *, missing: bool = False) -> str:
    """A concrete URL for a templated path: each parameter from the collection it follows."""
    kinds = {
        p["name"]: p["schema"].get("type")
        for p in operation.get("parameters", [])
        if p["in"] == "path"
    }

    def value(match: re.Match) -> str:
        collection = path[: match.start()].rstrip("/").rsplit("/", 1)[-1]
        integer = kinds.get(match.group(1)) == "integer"
        if missing:
            return "987654321" if integer else "no-such-thing"
        row = rows.get(collection)
        assert row is not None, f"{path}: the schema walk has no {collection} row; add one"
        return str(row.pk if integer else getattr(row, "slug", row.pk))

    return re.sub(r"\{(\w+)\}", value, path)


def test_schema_generation_emits_no_warning(settings, tmp_path):
    # Each warning of drf-spectacular is a schema that lies somewhere (two components of one
    # name publish one shape for both); generated as a deployment or a client would.
    written = tmp_path / "schema.yaml"
    spectacular = ["manage.py", "spectacular", "--validate", "--fail-on-warn"]
    generated = subprocess.run(
        [sys.executable, *spectacular, "--file", written],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "ARENA_SECRET_KEY": "k", "ARENA_DATA_DIR": str(tmp_path)},
        check=False,
    )
    assert generated.returncode == 0, generated.stderr
    assert written.stat().st_size > 0
    assert "Warning" not in generated.stderr and "Error" not in generated.stderr, generated.stderr


def response_schema(schema: Schema, path: str, method: str, status: str) -> dict:
    return schema.document["paths"][path][method]["responses"][status]["content"][
        "application/json"
    ]["schema"]


def component(schema: Schema, ref: dict) -> dict:
    return schema.document["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]


def test_run_endpoints_publish_each_its_own_run_shape(schema):
    launched = response_schema(schema, "/api/v1/runs/{run_id}/cancel", "post", "200")
    launch = component(schema, response_schema(schema, "/api/v1/runs/launch", "post", "201"))
    assert launch["properties"]["runs"]["items"] == launched
    public_page = component(schema, response_schema(schema, "/api/v1/runs", "get", "200"))
    public = public_page["properties"]["results"]["items"]
    assert launched != public
    assert set(component(schema, launched)["properties"]) == set(
        LaunchedRunOutputSerializer().fields
    )
    assert set(component(schema, public)["properties"]) == set(RunOutputSerializer().fields)


def test_launching_and_cancelling_runs_answer_in_the_documented_shape(schema, catalog_tasks):
    operator = token_create(username="operator")
    operator.user.is_staff = True
    operator.user.save()
    staff = client_with_token(operator)
    posts = dict(schema.operations("post"))
    body = {"agent": "scripted-weak", "tasks": "tt-vector-add", "repeats": 2}
    # Queued once the transaction commits, which this test's never does: no worker runs them.
    launched = staff.post("/api/v1/runs/launch", body, format="json")
    assert launched.status_code == 201, launched.content
    schema.check(posts["/api/v1/runs/launch"], launched)
    run_id = launched.json()["runs"][0]["id"]
    cancelled = staff.post(f"/api/v1/runs/{run_id}/cancel")
    assert cancelled.status_code == 200, cancelled.content
    schema.check(posts["/api/v1/runs/{run_id}/cancel"], cancelled)


def test_every_api_endpoint_is_in_the_schema(schema):
    documented = {path for path in schema.document["paths"] if path.startswith(API_PREFIX)}
    assert api_templates() <= documented, api_templates() - documented


def test_every_read_answers_real_rows_in_the_documented_shape(schema, graded_rows):
    operations = schema.operations("get")
    assert {path for path, _ in operations} >= {
        "/api/v1/evaluations",
        "/api/v1/submissions/{submission_id}",
    }
    # The rows are the platform's (no owner) and a batch is read by its owners alone: staff
    # read them all. Who reads what is tests/api/test_read_access.py's.
    operator = token_create(username="schema-operator")
    operator.user.is_staff = True
    operator.user.save()
    staff = client_with_token(operator)
    for path, operation in operations:
        response = staff.get(fill(path, operation, graded_rows))
        assert response.status_code == 200, (path, response.content[:500])
        schema.check(operation, response)
        body = response.json()
        rows = body.get("results", body) if isinstance(body, dict) else body
        assert rows, f"{path} answered no data: {body}"


def test_every_read_of_a_missing_object_is_a_documented_404(schema, anonymous):
    walked = 0
    for path, operation in schema.operations("get"):
        if "{" not in path:
            continue
        response = anonymous.get(fill(path, operation, {}, missing=True))
        assert response.status_code == 404, (path, response.content[:500])
        schema.check(operation, response)
        walked += 1
    assert walked >= 2


def test_every_write_refuses_anonymous_and_invalid_requests_in_the_error_shape(
    schema, anonymous, client, catalog_tasks
):
    operations = [*schema.operations("post"), *schema.operations("put")]
    operations += [*schema.operations("patch"), *schema.operations("delete")]
    assert operations
    for path, operation in operations:
        for method in ("post", "put", "patch", "delete"):
            if operation is schema.document["paths"][path].get(method):
                break
        url = fill(path, operation, {}, missing=True)
        unauthenticated = getattr(anonymous, method)(url, {}, format="json")
        assert unauthenticated.status_code == 401, (path, unauthenticated.content[:300])
        schema.check(operation, unauthenticated)
        invalid = getattr(client, method)(url, {}, format="json")
        assert 400 <= invalid.status_code < 500, (path, invalid.content[:300])
        schema.check(operation, invalid)


VALID_WRITES = {
    "/api/v1/evaluations": {"task": "silu", "solution": "class ModelNew: pass\n"},
    "/api/v1/submissions": {"task": "silu", "agent": "a", "solution": "class ModelNew: pass\n"},
}


def test_successful_and_throttled_writes_match_the_schema(schema, client, catalog_tasks, settings):
    settings.ARENA_WRITE_RATE = "1/min"
    posts = dict(schema.operations("post"))
    for number, (path, body) in enumerate(VALID_WRITES.items()):
        other = client_with_token(token_create(username=f"writer-{number}"))
        created = other.post(path, body, format="json")
        assert created.status_code == 201, created.content
        schema.check(posts[path], created)
        throttled = other.post(path, body, format="json")
        assert throttled.status_code == 429
        schema.check(posts[path], throttled)


class _Assets(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.urls.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.urls.append(attrs["href"])


def test_docs_page_loads_its_assets_from_this_site(anonymous, db):
    response = anonymous.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "/api/schema/" in page and '"error"' in page
    assert "now 60/min, set by" in page
    assets = _Assets()
    assets.feed(page)
    assert len(assets.urls) >= 3, assets.urls
    for url in assets.urls:
        assert url.startswith("/static/"), url
        # A collected file, named by its content's hash.
        assert staticfiles_storage.exists(url.removeprefix("/static/")), url
    assert re.search(r"/swagger-ui-bundle\.[0-9a-f]{12}\.js", page)


def test_schema_is_served_at_both_addresses(anonymous, db):
    new = anonymous.get("/api/schema/", {"format": "json"})
    old = anonymous.get("/api/v1/schema", {"format": "json"})
    assert new.status_code == old.status_code == 200
    assert json.loads(new.content)["paths"] == json.loads(old.content)["paths"]
    assert json.loads(new.content)["openapi"].startswith("3.")
