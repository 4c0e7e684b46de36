"""An account's own page of API tokens: make one, see its secret once, list them, revoke one."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods, require_POST

from accounts.forms import TokenCreateForm
from accounts.selectors import api_tokens_of
from accounts.services import TokenRefused, api_token_create, api_token_revoke
from web.throttles import write_throttled


@login_required
@require_http_methods(["GET", "POST"])
@write_throttled
def token_list(request: HttpRequest) -> HttpResponse:
    """A new token's secret is in the answer to the POST that made it and nowhere else: not in
    the session, not in a redirect. A reload posts again and is refused (names are unique per
    account), so the secret is never shown twice."""
    form = TokenCreateForm(request.POST or None)
    issued, status = None, 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                issued = api_token_create(user=request.user, name=form.cleaned_data["name"])
            except TokenRefused as exc:
                form.add_error("name", str(exc))
            else:
                form, status = TokenCreateForm(), 201
    context = {"form": form, "issued": issued, "tokens": api_tokens_of(user=request.user)}
    response = render(request, "accounts/tokens.html", context, status=status)
    add_never_cache_headers(response)  # no copy of a secret in any cache, the browser's included
    return response


@login_required
@require_POST
@write_throttled
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    # Another account's token is as unknown as one that never existed.
    if not api_token_revoke(user=request.user, token_id=token_id):
        raise Http404("You have no such token.")
    messages.success(request, "Token revoked: requests that send it are refused from now on.")
    return redirect("accounts:tokens")
