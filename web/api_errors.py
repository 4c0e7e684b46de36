"""One error shape for every 4xx of the API, from DRF views and from Django itself.

    {"error": {"status": 400, "code": "invalid", "message": "...",
               "fields": {"solution": ["This field is required."]}}}

`fields` is present only for validation errors; nested errors are flattened to dotted keys
("files.0.name") so that a client can always find the field by name.
"""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, JsonResponse
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

API_PREFIX = "/api/"


def error_body(*, status: int, code: str, message: str, fields: dict | None = None) -> dict:
    body: dict = {"status": status, "code": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    return {"error": body}


def flatten_fields(detail, prefix: str = "") -> dict[str, list[str]]:
    """{"files": [{"name": ["bad"]}]} -> {"files.0.name": ["bad"]}."""
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for key, value in detail.items():
            flat.update(flatten_fields(value, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    if isinstance(detail, list) and any(isinstance(item, dict | list) for item in detail):
        flat = {}
        for index, value in enumerate(detail):
            flat.update(flatten_fields(value, f"{prefix}.{index}" if prefix else str(index)))
        return flat
    items = detail if isinstance(detail, list) else [detail]
    return {prefix or "non_field_errors": [str(item) for item in items]}


def _fields_body(detail, *, status: int, code: str) -> dict:
    """A body for errors about named fields: the first one in the message, all in `fields`."""
    fields = flatten_fields(detail) or {"non_field_errors": ["invalid input"]}
    name, messages = next(iter(fields.items()))
    message = messages[0] if name == "non_field_errors" else f"{name}: {messages[0]}"
    return error_body(status=status, code=code, message=message, fields=fields)


def _first_code(codes) -> str:
    while isinstance(codes, dict | list) and codes:
        codes = next(iter(codes.values())) if isinstance(codes, dict) else codes[0]
    return codes if isinstance(codes, str) else "error"


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler (status, headers such as Retry-After), then our body."""
    # Django's own exceptions, as DRF would see them, so that their codes come through.
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # a 500: Django's own handling, logged with its traceback
    status = response.status_code
    if isinstance(exc, exceptions.ValidationError):
        response.data = _fields_body(exc.detail, status=status, code="invalid")
        return response
    code = _exception_code(exc)
    detail = getattr(exc, "detail", None) or response.data.get("detail", "")
    if isinstance(detail, dict | list):  # e.g. a 413 that names the file that was too large
        response.data = _fields_body(detail, status=status, code=code)
    else:
        response.data = error_body(status=status, code=code, message=str(detail))
    return response


def _exception_code(exc: Exception) -> str:
    if not isinstance(exc, exceptions.APIException):
        return "error"
    if isinstance(exc.detail, dict | list):
        # Per-field codes say which check failed; the error's code is the exception's kind.
        return exc.default_code
    return _first_code(exc.get_codes())


def _api_error(request: HttpRequest, *, status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(error_body(status=status, code=code, message=message), status=status)


def not_found(request: HttpRequest, exception: Exception | None = None):
    """handler404: JSON under /api/, the site's HTML page elsewhere."""
    if request.path.startswith(API_PREFIX):
        message = f"no endpoint or object at {request.path}"
        return _api_error(request, status=404, code="not_found", message=message)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception | None = None):
    """handler400: e.g. a body over ARENA_MAX_UPLOAD_BYTES, refused before any view runs."""
    if request.path.startswith(API_PREFIX):
        message = str(exception) or "bad request"
        return _api_error(request, status=400, code="bad_request", message=message)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception | None = None):
    if request.path.startswith(API_PREFIX):
        message = str(exception) or "permission denied"
        return _api_error(request, status=403, code="permission_denied", message=message)
    return defaults.permission_denied(request, exception)


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "additionalProperties": False,
    "properties": {
        "error": {
            "type": "object",
            "required": ["status", "code", "message"],
            "additionalProperties": False,
            "properties": {
                "status": {"type": "integer", "description": "the HTTP status, repeated"},
                "code": {"type": "string", "description": "stable code: invalid, not_found..."},
                "message": {"type": "string", "description": "what went wrong, for people"},
                "fields": {
                    "type": "object",
                    "description": "validation errors by field name (dotted when nested)",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}


def add_error_responses(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: every operation answers 4xx with the Error component.

    Done once here rather than per view, so endpoints added later document it too.
    """
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    response = {
        "description": "any client error, one shape; 429 carries Retry-After",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict):
                operation.setdefault("responses", {}).setdefault("4XX", response)
    return result
