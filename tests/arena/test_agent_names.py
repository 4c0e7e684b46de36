"""Agent names: one agent however a name is cased or spelled in compatibility forms, no new
agent that looks like an existing one (UTS #39 skeletons), readable ASCII slugs for names in
any script, and every path that makes an agent going through the one service."""

import importlib
import io
import json
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model

from arena.agent_names import AgentNameRefused, agent_name_parse
from arena.models import Agent, Run, Submission
from arena.services import agent_get_or_create
from tests.api.factories import client_with_token, error_of, token_create, upload

REPO = Path(__file__).resolve().parents[2]
SUBMIT = "/api/v1/submissions"
BATCHES = "/api/v1/batches"
FORM = "/trajectories/upload/"
CYRILLIC_A = "\u0430"
GREEK_OMICRON = "\u03bf"
CHAT_LOG = json.dumps(
    {"messages": [{"role": "user", "content": "a kernel"}, {"role": "assistant", "content": "ok"}]}
).encode()


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


def counts() -> tuple[int, int, int]:
    return Agent.objects.count(), Run.objects.count(), Submission.objects.count()


def refusal(response) -> str:
    assert response.status_code == 400, response.content
    error = error_of(response)
    (message,) = error["fields"]["agent"]
    return message


# -- the forms of a name -------------------------------------------------------------------------


def test_case_and_compatibility_forms_give_one_key():
    keys = {
        agent_name_parse(name).key
        for name in ("fish-agent", "FISH AGENT", "\uff26\uff29\uff33\uff28-agent", "\ufb01sh-agent")
    }
    assert keys == {"fish-agent"}
    assert agent_name_parse("\uff26\uff29\uff33\uff28  agent ").shown == "FISH agent"


def test_a_cyrillic_or_greek_letter_keeps_the_look_of_the_latin_name():
    latin = agent_name_parse("alice-agent")
    for spoof in (f"{CYRILLIC_A}lice-agent", f"alice-agent-r{GREEK_OMICRON}cket"):
        parsed = agent_name_parse(spoof)
        assert parsed.key != latin.key
    assert agent_name_parse(f"{CYRILLIC_A}lice-agent").lookalike_key == latin.lookalike_key
    assert agent_name_parse("modem").lookalike_key == agent_name_parse("modern").lookalike_key


def test_names_in_other_scripts_get_readable_ascii_slugs():
    slugs = {name: agent_name_parse(name).slug_base for name in ("アリス", "Алиса", "Straße")}
    assert slugs == {"アリス": "arisu", "Алиса": "alisa", "Straße": "strasse"}
    assert agent_name_parse("codex gpt-5.1").slug_base == "codex-gpt-5-1"


@pytest.mark.parametrize("name", ["alice\u200b-agent", "alice-agent\ufe0f", "al\x07ice", "!!!"])
def test_invisible_characters_and_names_without_letters_are_refused(name):
    with pytest.raises(AgentNameRefused):
        agent_name_parse(name)


# -- through the API -----------------------------------------------------------------------------


def test_a_cyrillic_look_alike_is_refused_naming_the_agent_it_imitates(alice, bob, catalog_tasks):
    assert submit(alice, "alice-agent").status_code == 201
    before = counts()
    message = refusal(submit(bob, f"{CYRILLIC_A}lice-agent"))
    assert "looks like that of the existing agent 'alice-agent' (alice-agent)" in message
    assert counts() == before
    # Its own owner is refused the look-alike too: it would be a second, confusable agent.
    assert refusal(submit(alice, f"{CYRILLIC_A}lice-agent")) == message


def test_a_greek_look_alike_is_refused_in_a_batch(alice, bob, catalog_tasks):
    assert submit(alice, "rocket").status_code == 201
    before = counts()
    body = {
        "agent": f"r{GREEK_OMICRON}cket",
        "submissions": [{"task": "silu", "code": "class ModelNew: pass\n"}],
    }
    response = client_with_token(bob).post(BATCHES, body, format="json")
    assert "the existing agent 'rocket'" in refusal(response)
    assert counts() == before


def test_fullwidth_ligature_and_case_variants_are_the_same_agent(alice, bob, catalog_tasks):
    first = submit(alice, "fish-agent").json()["run"]
    for variant in ("\uff26\uff29\uff33\uff28-agent", "\ufb01sh-agent", "FISH Agent"):
        response = submit(alice, variant)
        assert response.status_code == 201, response.content
        assert Run.objects.get(pk=response.json()["run"]).agent == Run.objects.get(pk=first).agent
    assert Agent.objects.count() == 1
    refused = submit(bob, "\uff26\uff29\uff33\uff28-AGENT")
    assert refused.status_code == 403
    assert "'fish-agent' belongs to another account" in error_of(refused)["message"]


def test_names_in_one_script_only_get_readable_slugs(alice, catalog_tasks):
    for name, slug in (("アリス", "arisu"), ("Алиса", "alisa")):
        response = submit(alice, name)
        assert response.status_code == 201, response.content
        agent = Run.objects.get(pk=response.json()["run"]).agent
        assert (agent.name, agent.slug) == (name, slug)
    # The Latin name is another agent (it does not look like the Cyrillic one): a free slug.
    latin = Run.objects.get(pk=submit(alice, "alisa").json()["run"]).agent
    assert latin.slug == "alisa-2"
    assert alice.user.agents.count() == 3


def test_a_distinct_name_is_accepted(alice, bob, catalog_tasks):
    assert submit(alice, "alice-agent").status_code == 201
    response = submit(bob, "bob-agent")
    assert response.status_code == 201, response.content
    assert Run.objects.get(pk=response.json()["run"]).agent.owner == bob.user


# -- through the upload form ---------------------------------------------------------------------


@pytest.fixture
def task(db):
    from tasks.models import Task

    return Task.objects.create(
        slug="demo/softmax",
        title="Softmax",
        category="torch2triton",
        suite="demo",
        dtype="fp32",
        regime="memory",
        folder="demo/softmax",
        version_hash="0" * 64,
    )


def test_the_upload_form_refuses_a_look_alike_and_stores_nothing(client, task, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATA_DIR = tmp_path / "data"
    agent_get_or_create(name="alice-agent")
    user = get_user_model().objects.create_user("uploader", password="not-used-here-1")
    client.force_login(user)
    log = io.BytesIO(CHAT_LOG)
    log.name = "chat.json"
    fields = {"file": log, "agent": f"{CYRILLIC_A}lice-agent", "task": task.slug}
    response = client.post(FORM, fields)
    assert response.status_code == 400
    assert "the existing agent &#x27;alice-agent&#x27;" in response.content.decode()
    assert (Agent.objects.count(), Run.objects.count()) == (1, 0)


# -- in the admin --------------------------------------------------------------------------------


def test_the_admin_refuses_a_look_alike_and_makes_a_slug_for_a_new_name(client, db):
    admin = get_user_model().objects.create_superuser("root", "root@example.org", "x" * 20)
    client.force_login(admin)
    agent_get_or_create(name="alice-agent")
    response = client.post("/admin/arena/agent/add/", {"name": f"{CYRILLIC_A}lice-agent"})
    assert response.status_code == 200
    assert "the existing agent &#x27;alice-agent&#x27;" in response.content.decode()
    response = client.post("/admin/arena/agent/add/", {"name": "Агент"})
    assert response.status_code == 302, response.content.decode()[-2000:]
    agent = Agent.objects.get(name="Агент")
    assert (agent.slug, agent.name_key) == ("agent", "агент")


# -- agents stored before the rules ------------------------------------------------------------


def test_stored_agents_get_keys_and_a_slug_only_where_theirs_lost_letters(db):
    fill_keys = importlib.import_module("arena.migrations.0010_agent_name_keys_fill").fill_keys
    old = {  # slugs as the old rule made them
        "alice-agent": "alice-agent",
        f"{CYRILLIC_A}lice-agent": "lice-agent",
        "Straße": "strae",
        "café": "cafe",
        "東京": "",
    }
    for name, slug in old.items():
        Agent.objects.create(name=name, slug=slug)
    fill_keys(apps, None)
    rows = {a.name: (a.slug, a.name_key, a.lookalike_key) for a in Agent.objects.all()}
    assert rows == {
        "alice-agent": ("alice-agent", "alice-agent", "alice-agent"),
        # The look-alike keeps its key and takes a readable slug; its look stays the older's.
        f"{CYRILLIC_A}lice-agent": ("alice-agent-2", f"{CYRILLIC_A}lice-agent", None),
        "Straße": ("strasse", "strasse", "strasse"),
        "café": ("cafe", "café", agent_name_parse("café").lookalike_key),
        "東京": ("dongjing", "東京", "東京"),
    }
    assert agent_get_or_create(name="CAFÉ").slug == "cafe"  # found by its key


# -- one service makes every agent -----------------------------------------------------------


def test_no_code_makes_an_agent_but_the_agent_service():
    making = re.compile(r"Agent\.objects\.(create|get_or_create|update_or_create|bulk_create)\(")
    found = [
        str(path.relative_to(REPO))
        for folder in ("arena", "bench", "config", "evaluator", "leaderboard", "tasks")
        for path in (REPO / folder).rglob("*.py")
        if "migrations" not in path.parts and making.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
