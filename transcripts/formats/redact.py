"""Secrets removed from logs before they are stored or shown.

Each secret is replaced by `[REDACTED]`. The patterns never match a quote or a backslash, so
redacting the raw text of a JSON line (where a secret sits inside an escaped string) leaves the
line valid JSON. Key shapes are matched after a JSON escape such as `\\n` as well as after a
word boundary, because in a raw log a key printed on its own line follows `\\n`. Every pattern
starts with literal text, so a 20 MB log is scanned in well under a second.
"""

from __future__ import annotations

import re

MARKER = "[REDACTED]"

_KEYS = re.compile(
    "|".join(
        [
            r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{20,}",  # Anthropic
            r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
            r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
            r"ya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access token
            r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
            r"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained token
            r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id
            r"hf_[A-Za-z0-9]{30,}",  # Hugging Face
            r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack tokens
            r"xapp-\d-[A-Za-z0-9\-]{10,}",  # Slack app token
        ]
    )
)

# Authorization headers: keep the scheme, drop the credential.
_BEARER = re.compile(r"(?i:Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{8,}")
_AUTH_HEADER = re.compile(
    r"(?i:x-api-key|x-goog-api-key|api-key)\\?\"?\s*:\s*\\?\"?[^\s\"'\\,;]{8,}"
)

# NAME=value / NAME: value in env dumps, for names that say they hold a secret: the name ends in
# one of these words and is followed by = or :. The value stops at a quote, backslash, space or
# separator so that JSON escaping is never cut.
_SECRET_NAME_ENDINGS = (
    "TOKEN",
    "SECRET",
    "_KEY",
    "PASSWORD",
    "PASSWD",
    "_PWD",
    "CREDENTIAL",
    "CREDENTIALS",
    "password",
    "Password",
    "passwd",
    "api_key",
    "apikey",
    "apiKey",
    "secret_key",
    "access_key",
    "client_secret",
)
_AFTER_NAME = re.compile(
    r"(?:\\?\")?[ \t]*[=:][ \t]*(?:\\?[\"'])?(?!\[REDACTED\])([^\s\"'\\,;&]{3,})"
)
_KEY_PREFIXES = (
    "sk-",
    "AIza",
    "ya29.",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "hf_",
    "xox",
    "xapp-",
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN ([A-Z ]*)PRIVATE KEY-----[A-Za-z0-9+/=\s\\:,\-]*?-----END \1PRIVATE KEY-----"
)
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _starts_token(text: str, start: int) -> bool:
    """No word character before `start`, or a JSON escape (\\n, \\t) right before it."""
    if start == 0 or text[start - 1] not in _WORD:
        return True
    return start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrt"


def redact_text(text: str) -> str:
    """`text` with every secret we recognise replaced by [REDACTED]."""
    # Each pattern runs only where its literal start occurs: a str.find is far cheaper than
    # a regex scan over megabytes of log.
    if "PRIVATE KEY-----" in text:
        text = _PRIVATE_KEY.sub(MARKER, text)
    if any(prefix in text for prefix in _KEY_PREFIXES):
        text = _KEYS.sub(
            lambda m: MARKER if _starts_token(m.string, m.start()) else m.group(0), text
        )
    lowered = text.lower()
    if "bearer" in lowered or "basic" in lowered:
        text = _BEARER.sub(lambda m: m.group(0).split(None, 1)[0] + " " + MARKER, text)
    if "api-key" in lowered:
        text = _AUTH_HEADER.sub(lambda m: m.group(0)[: -len(_tail(m.group(0)))] + MARKER, text)
    return _redact_assignments(text)


def _tail(text: str) -> str:
    match = re.search(r"[^\s\"'\\,;]+$", text)
    return match.group(0) if match else ""


def _redact_assignments(text: str) -> str:
    spans: set[tuple[int, int]] = set()
    for ending in _SECRET_NAME_ENDINGS:
        position = text.find(ending)
        while position != -1:
            match = _AFTER_NAME.match(text, position + len(ending))
            if match is not None:
                spans.add(match.span(1))
            position = text.find(ending, position + 1)
    if not spans:
        return text
    out: list[str] = []
    copied = 0
    for start, end in sorted(spans):
        if start < copied:
            continue
        out.append(text[copied:start])
        out.append(MARKER)
        copied = end
    out.append(text[copied:])
    return "".join(out)


def redact_bytes(data: bytes) -> bytes:
    """The same for a raw upload; bytes that are not UTF-8 pass through unchanged."""
    return redact_text(data.decode("utf-8", errors="surrogateescape")).encode(
        "utf-8", errors="surrogateescape"
    )
