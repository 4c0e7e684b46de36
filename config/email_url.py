"""ARENA_EMAIL_URL: where the site's mail goes (sign-up verification, password resets).

    console:                          printed on the web process's output (the default)
    smtp://user:password@host:587     SMTP with STARTTLS (the submission port's usual way)
    smtps://user:password@host:465    SMTP over TLS from the first byte
    smtp+plain://host:25              SMTP without encryption: a relay on this host only

A user name or password holding `:`, `@` or `/` is percent-encoded (`%40` for `@`).
"""

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

CONSOLE = "django.core.mail.backends.console.EmailBackend"
SMTP = "django.core.mail.backends.smtp.EmailBackend"
# scheme: (default port, STARTTLS, TLS from the start)
_SMTP_SCHEMES = {
    "smtp": (587, True, False),
    "smtps": (465, False, True),
    "smtp+plain": (25, False, False),
}


@dataclass(frozen=True)
class EmailSettings:
    backend: str
    host: str = "localhost"
    port: int = 25
    user: str = ""
    password: str = ""
    use_tls: bool = False
    use_ssl: bool = False


def email_settings(name: str, raw: str) -> EmailSettings:
    """The settings `raw` (the value of variable `name`) asks for; a value that is none of the
    forms above stops start-up, naming the variable but never echoing a password."""
    if raw.strip() in ("", "console", "console:"):
        return EmailSettings(backend=CONSOLE)
    url = urlsplit(raw.strip())
    if url.scheme not in _SMTP_SCHEMES or not url.hostname:
        raise ImproperlyConfigured(
            f"{name} is not console: or smtp://, smtps://, smtp+plain://user:password@host:port "
            f"(its scheme is {url.scheme or 'missing'!r}, and it needs a host)"
        )
    try:
        port = url.port
    except ValueError:
        raise ImproperlyConfigured(f"{name}: the port of {url.hostname} is not a number") from None
    default_port, starttls, tls = _SMTP_SCHEMES[url.scheme]
    return EmailSettings(
        backend=SMTP,
        host=url.hostname,
        port=port or default_port,
        user=unquote(url.username or ""),
        password=unquote(url.password or ""),
        use_tls=starttls,
        use_ssl=tls,
    )
