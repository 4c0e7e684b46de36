"""Tokens on writes, public reads, per-token rate limits and one error shape for every 4xx."""

import pytest

from evaluator.models import Evaluation
from tests.api.factories import client_with_token, error_of, token_create, upload

URL = "/api/v1/evaluations"


def post_solution(client):
    return client.post(URL, {"task": "silu", "solution": upload()}, format="multipart")


def test_write_without_a_token_is_401_asking_for_one(anonymous, catalog_tasks):
    response = post_solution(anonymous)
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"
    assert not Evaluation.objects.exists()


def test_write_with_an_unknown_token_is_401(catalog_tasks):
    response = post_solution(_client_with_key("0" * 40))
    assert response.status_code == 401
    error = error_of(response)
    assert (error["code"], error["message"]) == ("authentication_failed", "Invalid token.")
    assert not Evaluation.objects.exists()


def _client_with_key(key: str):
    client = client_with_token(None)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_deactivated_users_token_is_refused(token, catalog_tasks):
    token.user.is_active = False
    token.user.save()
    response = post_solution(client_with_token(token))
    assert response.status_code == 401
    assert error_of(response)["code"] == "authentication_failed"


def test_reads_need_no_token(anonymous, db):
    response = anonymous.get(URL)
    assert response.status_code == 200
    assert response.json()["results"] == []


def test_writes_beyond_the_rate_get_429_with_retry_after(client, catalog_tasks, settings):
    settings.ARENA_WRITE_RATE = "2/min"
    assert [post_solution(client).status_code for _ in range(2)] == [201, 201]
    response = post_solution(client)
    assert response.status_code == 429
    error = error_of(response)
    assert error["code"] == "throttled"
    assert 0 < int(response["Retry-After"]) <= 60
    assert Evaluation.objects.count() == 2


def test_rate_limit_counts_per_token(client, catalog_tasks, settings):
    settings.ARENA_WRITE_RATE = "1/min"
    assert post_solution(client).status_code == 201
    assert post_solution(client).status_code == 429
    other = client_with_token(token_create(username="someone-else"))
    assert post_solution(other).status_code == 201


def test_reads_are_not_rate_limited(client, catalog_tasks, settings):
    settings.ARENA_WRITE_RATE = "1/min"
    assert post_solution(client).status_code == 201
    assert [client.get(URL).status_code for _ in range(5)] == [200] * 5


def test_rejected_writes_count_against_the_rate(client, catalog_tasks, settings):
    # Validation is work too: a client hammering with bad input is limited all the same.
    settings.ARENA_WRITE_RATE = "1/min"
    assert client.post(URL, {"task": "nope"}, format="json").status_code == 400
    assert post_solution(client).status_code == 429


def test_unknown_api_url_is_a_json_404(anonymous, db):
    response = anonymous.get("/api/v1/no-such-endpoint")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    error = error_of(response)
    assert error["code"] == "not_found"
    assert "/api/v1/no-such-endpoint" in error["message"]


def test_unknown_page_outside_the_api_stays_html(anonymous, db):
    response = anonymous.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_missing_object_is_a_json_404(anonymous, db):
    response = anonymous.get(f"{URL}/424242")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_wrong_method_is_405_in_the_same_shape(client, db):
    response = client.delete(f"{URL}/1")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


def test_malformed_json_is_a_parse_error(client, db):
    response = client.post(URL, data="{not json", content_type="application/json")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "parse_error"
    assert "JSON parse error" in error["message"]


def test_unsupported_media_type_is_415(client, db):
    response = client.post(URL, data="task=silu", content_type="text/plain")
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    ("detail", "fields"),
    [
        ({"task": ["bad"]}, {"task": ["bad"]}),
        ({"files": [{"name": ["bad"]}, {}]}, {"files.0.name": ["bad"]}),
        (["whole request is bad"], {"non_field_errors": ["whole request is bad"]}),
    ],
)
def test_nested_validation_errors_are_flattened_to_field_names(detail, fields):
    from web.api_errors import flatten_fields

    assert flatten_fields(detail) == fields


def test_unknown_api_url_is_json_with_debug_on_too(anonymous, db, settings):
    settings.DEBUG = True  # Django's debug 404 page would otherwise answer in HTML
    response = anonymous.get("/api/v2/anything")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_body_over_the_upload_limit_is_a_json_400(client, catalog_tasks, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    client.raise_request_exception = False
    form = {"task": "silu", "solution": "#" * 4096}  # a form field, not a file
    response = client.post(URL, form, format="multipart")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "bad_request"
    assert "DATA_UPLOAD_MAX_MEMORY_SIZE" in error["message"]
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize(("value", "expected"), [("5/hour", "5/hour"), ("", "")])
def test_write_rate_is_read_from_the_environment(value, expected):
    from tests.arena.test_settings import load_settings

    out = load_settings({"ARENA_DEBUG": "1", "ARENA_WRITE_RATE": value}, "repr(s.ARENA_WRITE_RATE)")
    assert out.stdout.strip() == repr(expected), out.stderr


def test_a_malformed_write_rate_stops_start_up():
    from tests.arena.test_settings import load_settings

    out = load_settings({"ARENA_DEBUG": "1", "ARENA_WRITE_RATE": "lots"}, "s.ARENA_WRITE_RATE")
    assert out.returncode != 0
    assert "ARENA_WRITE_RATE='lots' is not like 60/min" in out.stderr


def test_no_write_rate_means_no_limit(client, catalog_tasks, settings):
    settings.ARENA_WRITE_RATE = ""
    codes = {post_solution(client).status_code for _ in range(5)}
    assert codes == {201}


def test_an_error_about_a_named_field_that_is_not_a_400_names_it_too():
    from rest_framework import status
    from rest_framework.exceptions import APIException

    from web.api_errors import api_exception_handler

    class TooLarge(APIException):
        status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
        default_code = "too_large"

    response = api_exception_handler(TooLarge({"file": ["larger than the limit"]}), {})
    assert response.status_code == 413
    assert response.data == {
        "error": {
            "status": 413,
            "code": "too_large",
            "message": "file: larger than the limit",
            "fields": {"file": ["larger than the limit"]},
        }
    }
