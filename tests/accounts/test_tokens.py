"""API tokens on an account's own page: made with a name, the secret shown once and kept only
hashed, listed, used on the API with either header, revoked by their owner alone."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import api_token_create
from arena.models import Run
from tests.accounts.conftest import log_in, sign_up

pytestmark = pytest.mark.django_db

TOKENS = "/accounts/tokens/"
# A GET that needs an account: the run_kernel list shows a caller their own gradings only
# (docs/api.md), and an anonymous one none; a bad token is refused before either.
NEEDS_AUTH_WRITE = "/api/v1/evaluations"


def secret_on(page: str) -> str | None:
    found = re.search(r'id="new-token-secret">([^<]+)<', page)
    return found.group(1) if found else None


def make_token(client, name: str) -> str:
    response = client.post(TOKENS, {"name": name})
    assert response.status_code == 201, response.content.decode()[-1500:]
    return secret_on(response.content.decode())


def api(secret: str | None = None, scheme: str = "Token") -> APIClient:
    client = APIClient()
    if secret is not None:
        client.credentials(HTTP_AUTHORIZATION=f"{scheme} {secret}")
    return client


def write(client: APIClient):
    """A write that needs an account; an authenticated one gets as far as validation (400)."""
    return client.post(NEEDS_AUTH_WRITE, {"task": "no-such-task", "solution": "x"}, format="json")


def submit(client: APIClient, agent: str):
    solution = SimpleUploadedFile("s.py", b"class ModelNew: pass\n")
    return client.post(
        "/api/v1/submissions", {"task": "silu", "agent": agent, "solution": solution}
    )


def test_sign_up_log_in_make_a_token_submit_with_it_and_revoke_it(client, catalog_tasks):
    assert sign_up(client, "carol").status_code == 302
    client.logout()
    assert log_in(client, "carol").status_code == 302

    secret = make_token(client, "laptop")
    assert secret and secret.startswith("ka_")
    made = submit(api(secret), "carols agent")
    assert made.status_code == 201, made.content
    assert Run.objects.get(pk=made.json()["run"]).created_by.username == "carol"
    assert submit(api(secret, "Bearer"), "carols agent").status_code == 201

    token = ApiToken.objects.get(user__username="carol")
    response = client.post(f"{TOKENS}{token.pk}/revoke")
    assert response.status_code == 302 and response["Location"] == TOKENS
    refused = submit(api(secret), "carols agent")
    assert refused.status_code == 401
    assert refused.json() == {
        "error": {"status": 401, "code": "authentication_failed", "message": "Invalid token."}
    }


def test_the_secret_is_kept_nowhere_in_plain_text(alice):
    issued = api_token_create(user=alice, name="ci")
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM accounts_apitoken")
        [row] = cursor.fetchall()
    stored = " ".join(str(value) for value in row)
    # No run of 12 characters of the secret is in the row: the prefix (11) is all it shows.
    pieces = {issued.secret[i : i + 12] for i in range(len(issued.secret) - 11)}
    assert not [piece for piece in pieces if piece in stored]
    assert issued.token.prefix == issued.secret[:11]


def test_a_new_tokens_secret_is_shown_once(client, alice):
    client.force_login(alice)
    secret = make_token(client, "laptop")
    again = client.get(TOKENS)
    page = again.content.decode()
    assert secret not in page and secret_on(page) is None
    assert "laptop" in page and secret[:11] in page
    assert "no-store" in again["Cache-Control"]


def test_posting_the_form_again_makes_no_second_token(client, alice):
    client.force_login(alice)
    secret = make_token(client, "laptop")
    response = client.post(TOKENS, {"name": "laptop"})  # a reload of the page that showed it
    assert response.status_code == 400
    page = response.content.decode()
    assert "You already have a token named &#x27;laptop&#x27;." in page
    assert secret_on(page) is None and secret not in page
    assert ApiToken.objects.filter(user=alice).count() == 1


def test_unnamed_tokens_get_names_of_their_own(client, alice):
    client.force_login(alice)
    make_token(client, "")
    make_token(client, "")
    assert set(ApiToken.objects.values_list("name", flat=True)) == {"token", "token 2"}


def test_the_list_shows_each_tokens_name_prefix_and_use(client, alice):
    issued = api_token_create(user=alice, name="laptop")
    api_token_create(user=alice, name="ci")
    assert write(api(issued.secret)).status_code == 400
    client.force_login(alice)
    rows = re.findall(r'<tr id="token-\d+">(.*?)</tr>', client.get(TOKENS).content.decode(), re.S)
    assert [re.search(r'class="name">([^<]+)<', row).group(1) for row in rows] == ["ci", "laptop"]
    assert "never" in rows[0] and "never" not in rows[1]
    assert f"{issued.token.prefix}…" in rows[1]


def test_another_account_cannot_revoke_your_token(client, alice, bob):
    token = api_token_create(user=alice, name="alices-laptop").token
    client.force_login(bob)
    assert client.post(f"{TOKENS}{token.pk}/revoke").status_code == 404
    assert ApiToken.objects.filter(pk=token.pk).exists()
    assert "alices-laptop" not in client.get(TOKENS).content.decode()


def test_the_tokens_page_needs_a_login(client):
    response = client.get(TOKENS)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={TOKENS}"
    assert client.post(f"{TOKENS}1/revoke").status_code == 302


@pytest.mark.parametrize(
    "header",
    [
        "Token ka_unknown",
        "Bearer ka_unknown",
        "Token " + "0" * 40,
        "Token",
        "Bearer a b",
        "Token é",
    ],
)
def test_unknown_or_malformed_tokens_answer_401_in_the_api_error_shape(header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    response = write(client)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Token"


def test_other_schemes_are_not_ours_to_judge():
    response = write(api("dXNlcjpwdw==", "Basic"))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_a_deactivated_accounts_token_is_refused(alice):
    issued = api_token_create(user=alice, name="laptop")
    alice.is_active = False
    alice.save()
    assert write(api(issued.secret)).status_code == 401


def test_last_used_is_written_once_a_minute_at_most(alice):
    issued = api_token_create(user=alice, name="laptop")
    assert write(api(issued.secret)).status_code == 400
    first = ApiToken.objects.get().last_used
    assert first is not None
    assert write(api(issued.secret)).status_code == 400
    assert ApiToken.objects.get().last_used == first


def test_token_create_prints_the_secret_alone_on_one_line(alice, capsys):
    call_command("token_create", "alice", "--name", "cli")
    out, err = capsys.readouterr()
    secret = out.strip()
    assert out == secret + "\n" and secret.startswith("ka_")
    assert "cli" in err
    assert write(api(secret)).status_code == 400
    call_command("token_create", "alice")
    assert ApiToken.objects.filter(user=alice, name="token").exists()


def test_token_create_names_what_is_wrong(alice):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no account named 'nobody'"):
        call_command("token_create", "nobody")
    call_command("token_create", "alice", "--name", "cli")
    with pytest.raises(CommandError, match="already have a token named 'cli'"):
        call_command("token_create", "alice", "--name", "cli")
