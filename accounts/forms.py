from allauth.account import forms as allauth_forms
from django import forms

from accounts.models import ApiToken


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        max_length=ApiToken._meta.get_field("name").max_length,
        required=False,
        help_text="Where it is used, e.g. “laptop” or “ci”. Left empty: “token”, “token 2”, …",
    )


class LoginForm(allauth_forms.LoginForm):
    """allauth's login form, in the site's words."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["login"].label = "Username or e-mail"
        if "remember" in self.fields:
            self.fields["remember"].label = "Keep me logged in on this browser"
