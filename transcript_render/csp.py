"""The Content-Security-Policy of a transcript document.

The document's one inline script and one inline style are allowed by their sha256 hashes, so
nothing injected into the page can run or restyle it even if escaping ever failed: no inline
handlers, no 'unsafe-inline', no other origin, images only as data: URLs.
"""

from __future__ import annotations

import base64
import hashlib


def source_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def policy(*, script: str, style: str, in_meta: bool = False) -> str:
    """The policy for a document whose inline script and style are exactly these texts.

    frame-ancestors only works in an HTTP header (a <meta> policy ignores it and Chromium
    warns), so the <meta> of the export leaves it out.
    """
    directives = [
        "default-src 'none'",
        f"script-src {source_hash(script)}",
        f"style-src {source_hash(style)}",
        "img-src data:",
        "font-src 'none'",
        "connect-src 'none'",
        "media-src 'none'",
        "object-src 'none'",
        "frame-src 'none'",
        "worker-src 'none'",
        "manifest-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ]
    if not in_meta:
        directives.append("frame-ancestors 'none'")
    return "; ".join(directives)
