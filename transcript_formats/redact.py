"""Secrets removed from logs before they are stored or shown.

Each secret is replaced by `[REDACTED]`. The patterns never match a quote or a backslash, so
redacting the raw text of a JSON line (where a secret sits inside an escaped string) leaves the
line valid JSON. Key shapes are matched after a JSON escape such as `\\n` as well as after a
word boundary, because in a raw log a key printed on its own line follows `\\n`. Every pattern
starts with literal text, so a 20 MB log is scanned in well under a second.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

MARKER = "[REDACTED]"
# A stream is redacted in blocks of whole lines of about this size (redact_chunks).
BLOCK_BYTES = 1 << 20
# A private key's lines are kept in one block; one longer than this is no key.
PRIVATE_KEY_MAX_BYTES = 1 << 16

_KEYS = re.compile(
    b"|".join(
        [
            rb"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{20,}",  # Anthropic
            rb"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
            rb"AIza[0-9A-Za-z_\-]{35}",  # Google API key
            rb"ya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access token
            rb"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
            rb"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained token
            rb"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id
            rb"hf_[A-Za-z0-9]{30,}",  # Hugging Face
            rb"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack tokens
            rb"xapp-\d-[A-Za-z0-9\-]{10,}",  # Slack app token
        ]
    )
)
# Where the patterns above can start: they are tried only where one of these occurs ("gh"
# stands for the five gh?_ tokens: one scan of the log instead of five).
_KEY_PREFIXES = (
    b"sk-",
    b"AIza",
    b"ya29.",
    b"gh",
    b"github_pat_",
    b"AKIA",
    b"ASIA",
    b"hf_",
    b"xox",
    b"xapp-",
)

# Authorization headers: keep the scheme, drop the credential.
_BEARER = re.compile(rb"(?i:Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]{8,}")
_AUTH_HEADER = re.compile(
    rb"(?i:x-api-key|x-goog-api-key|api-key)\\?\"?\s*:\s*\\?\"?[^\s\"'\\,;]{8,}"
)

# NAME=value / NAME: value in env dumps, for names that say they hold a secret: the name ends in
# one of these words and is followed by = or :. The value stops at a quote, backslash, space or
# separator so that JSON escaping is never cut.
_SECRET_NAME_ENDINGS = (
    b"TOKEN",
    b"SECRET",
    b"_KEY",
    b"PASSWORD",
    b"PASSWD",
    b"_PWD",
    b"CREDENTIAL",
    b"CREDENTIALS",
    b"password",
    b"Password",
    b"passwd",
    b"api_key",
    b"apikey",
    b"apiKey",
    b"secret_key",
    b"access_key",
    b"client_secret",
)
# Each ending is looked for through a shorter piece of it, shared where endings overlap: a
# scan of a 20 MB log costs about 15 ms, so 11 scans stand for the 17 endings. (piece, offset
# of the piece in the ending, endings).
_ENDING_SCANS = tuple(
    (
        piece,
        tuple((ending, ending.find(piece)) for ending in _SECRET_NAME_ENDINGS if piece in ending),
    )
    for piece in (
        b"TOKEN",
        b"SECRET",
        b"PASSW",
        b"CREDENTIAL",
        b"_KEY",
        b"_PWD",
        b"assw",
        b"_key",
        b"apikey",
        b"apiKey",
        b"_secret",
    )
)
_AFTER_NAME = re.compile(
    rb"(?:\\?\")?[ \t]*[=:][ \t]*(?:\\?[\"'])?(?!\[REDACTED\])([^\s\"'\\,;&]{3,})"
)
_PRIVATE_KEY = re.compile(
    rb"-----BEGIN ([A-Z ]*)PRIVATE KEY-----[A-Za-z0-9+/=\s\\:,\-]*?-----END \1PRIVATE KEY-----"
)
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# 64 characters of base64 right before a key's shape: it is inside an image or other blob.
_BLOB_RUN = 64
_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{%d}" % _BLOB_RUN)


def _starts_token(data: bytes, start: int) -> bool:
    """No word character before `start`, or a JSON escape (\\n, \\t) right before it; and not
    inside a run of base64 (an embedded image's data is never a secret)."""
    if start >= _BLOB_RUN and _BASE64_RUN.fullmatch(data, start - _BLOB_RUN, start):
        return False
    if start == 0 or data[start - 1] not in _WORD:
        return True
    return start >= 2 and data[start - 2] == ord("\\") and data[start - 1] in b"nrt"


def redact_text(text: str) -> str:
    """`text` with every secret we recognise replaced by [REDACTED]."""
    data = text.encode("utf-8", errors="surrogatepass")
    return redact_bytes(data).decode("utf-8", errors="surrogatepass")


def redact_bytes(data: bytes) -> bytes:
    """The same for a raw upload. The work is done on the bytes (the patterns are ASCII): a
    search of bytes is several times faster than one of a decoded string, so a 20 MB log costs
    tens of milliseconds. Bytes that are not UTF-8 pass through unchanged."""
    if b"PRIVATE KEY-----" in data:
        data = _PRIVATE_KEY.sub(MARKER.encode(), data)
    data = _redact_keys(data)
    lowered = data.lower()
    if b"bearer" in lowered or b"basic" in lowered:
        data = _BEARER.sub(lambda m: m.group(0).split(None, 1)[0] + b" " + MARKER.encode(), data)
    if b"api-key" in lowered:
        data = _AUTH_HEADER.sub(
            lambda m: m.group(0)[: -len(_tail(m.group(0)))] + MARKER.encode(), data
        )
    return _redact_assignments(data)


def _redact_keys(data: bytes) -> bytes:
    """_KEYS replaced where a key starts a token, as re.sub would: left to right, each match
    (kept or replaced) consuming its text. Matches are tried only where a prefix occurs."""
    starts: set[int] = set()
    for prefix in _KEY_PREFIXES:
        position = data.find(prefix)
        while position != -1:
            starts.add(position)
            position = data.find(prefix, position + 1)
    if not starts:
        return data
    spans: list[tuple[int, int]] = []
    copied = 0
    for start in sorted(starts):
        if start < copied:
            continue
        match = _KEYS.match(data, start)
        if match is None:
            continue
        copied = match.end()
        if _starts_token(data, start):
            spans.append(match.span())
    return _replaced(data, spans)


def _tail(text: bytes) -> bytes:
    match = re.search(rb"[^\s\"'\\,;]+$", text)
    return match.group(0) if match else b""


def _redact_assignments(data: bytes) -> bytes:
    spans: set[tuple[int, int]] = set()
    for piece, endings in _ENDING_SCANS:
        position = data.find(piece)
        while position != -1:
            for ending, offset in endings:
                start = position - offset
                if start >= 0 and data.startswith(ending, start):
                    match = _AFTER_NAME.match(data, start + len(ending))
                    if match is not None:
                        spans.add(match.span(1))
            position = data.find(piece, position + 1)
    return _replaced(data, sorted(spans))


def _replaced(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """`data` with each of the sorted `spans` replaced by the marker (overlaps once)."""
    if not spans:
        return data
    out: list[bytes] = []
    copied = 0
    for start, end in spans:
        if start < copied:
            continue
        out.append(data[copied:start])
        out.append(MARKER.encode())
        copied = end
    out.append(data[copied:])
    return b"".join(out)


# The end of a line where a header's credential may follow on the next one (\s spans lines).
_OPEN_HEADER = re.compile(rb"(?i:bearer|basic|api-key)(?:\\?\"?\s*:?\s*\\?\"?)?\s*\Z")
_HEADER_TAIL_BYTES = 80


def redact_chunks(chunks: Iterable[bytes], *, block_bytes: int = BLOCK_BYTES) -> Iterator[bytes]:
    """redact_bytes over a stream: the same bytes as redacting it whole, in blocks of whole
    lines. Only a private key and an authorization header's whitespace may span a line break:
    a block never ends inside either. Memory: a block, or one line where a line is longer."""
    pieces: list[bytes] = []
    held = 0
    for chunk in chunks:
        pieces.append(chunk)
        held += len(chunk)
        if held < block_bytes or b"\n" not in chunk:
            continue
        buffer = b"".join(pieces)
        cut = _block_end(buffer, block_bytes)
        if cut:
            yield redact_bytes(buffer[:cut])
            buffer = buffer[cut:]
        pieces, held = [buffer], len(buffer)
    if held:
        yield redact_bytes(b"".join(pieces))


def _block_end(buffer: bytes, block_bytes: int) -> int:
    """Where the block may end: after the last line break that splits no secret (0: nowhere
    yet). Past the caps, after the last line break whatever it splits."""
    cut = buffer.rfind(b"\n") + 1
    forced = cut
    while cut:
        begin = buffer.rfind(b"-----BEGIN ", 0, cut)
        if (
            begin != -1
            and b"PRIVATE KEY-----" in buffer[begin : begin + 100]
            and buffer.find(b"-----END ", begin, cut) == -1
        ):
            cut = buffer.rfind(b"\n", 0, begin) + 1
            continue
        if _OPEN_HEADER.search(buffer, max(0, cut - _HEADER_TAIL_BYTES), cut - 1):
            cut = buffer.rfind(b"\n", 0, cut - 1) + 1
            continue
        return cut
    return forced if len(buffer) > block_bytes + PRIVATE_KEY_MAX_BYTES else 0
