"""API token secrets: made here, shown once, and kept only as their SHA-256.

A secret is 32 random bytes in URL-safe base64 behind "ka_", which secret scanners and people
can recognise. Its first PREFIX_LENGTH characters are kept in clear to name the token on its
owner's page and to find its row; they tell an attacker nothing the other 40 characters do not
still hide (the prefix holds 8 of the secret's 43 random characters). A plain SHA-256 is enough
for a secret this long: it cannot be guessed, so slow hashes made for passwords buy nothing and
would cost every API request.
"""

import hashlib
import hmac
import secrets

SECRET_MARK = "ka_"  # noqa: S105 (a marker, not a secret)
PREFIX_LENGTH = 11  # the mark and 8 random characters
# Longer than any secret we issued (43 characters and the mark; DRF's old keys had 40): a longer
# header is not hashed, it is refused.
MAX_SECRET_LENGTH = 100


def secret_new() -> str:
    return SECRET_MARK + secrets.token_urlsafe(32)


def secret_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_prefix(secret: str) -> str:
    return secret[:PREFIX_LENGTH]


def digest_matches(secret: str, digest: str) -> bool:
    return hmac.compare_digest(secret_digest(secret), digest)
