"""ARENA_EMAIL_URL: the console by default, SMTP with STARTTLS, TLS or neither; a bad value stops
start-up naming the variable and never its password."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.email_url import CONSOLE, SMTP, email_settings


def test_unset_prints_mail_on_the_console():
    assert email_settings("ARENA_EMAIL_URL", "").backend == CONSOLE
    assert email_settings("ARENA_EMAIL_URL", "console:").backend == CONSOLE


@pytest.mark.parametrize(
    ("url", "port", "starttls", "tls"),
    [
        ("smtp://arena%40example.org:p%40ss:w@mail.example.org", 587, True, False),
        ("smtps://arena%40example.org:p%40ss:w@mail.example.org", 465, False, True),
        ("smtp+plain://arena%40example.org:p%40ss:w@mail.example.org:2525", 2525, False, False),
    ],
)
def test_smtp_urls_give_the_server_the_account_and_the_encryption(url, port, starttls, tls):
    mail = email_settings("ARENA_EMAIL_URL", url)
    assert (mail.backend, mail.host, mail.port) == (SMTP, "mail.example.org", port)
    assert (mail.user, mail.password) == ("arena@example.org", "p@ss:w")
    assert (mail.use_tls, mail.use_ssl) == (starttls, tls)


@pytest.mark.parametrize("url", ["smtp://user:hunter2@", "imap://user:hunter2@host", "hunter2"])
def test_a_bad_url_stops_start_up_without_showing_the_password(url):
    with pytest.raises(ImproperlyConfigured, match="ARENA_EMAIL_URL") as refused:
        email_settings("ARENA_EMAIL_URL", url)
    assert "hunter2" not in str(refused.value)


def test_a_port_that_is_no_number_is_named():
    with pytest.raises(ImproperlyConfigured, match=r"the port of mail\.example\.org"):
        email_settings("ARENA_EMAIL_URL", "smtp://u:secret@mail.example.org:25x")
