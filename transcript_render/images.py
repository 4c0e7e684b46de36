"""Images from the log embedded as data: URLs, within a cap per image and per page.

Only PNG, JPEG, GIF and WebP are embedded, and the type is read from the data's own first
bytes, not from the media type the log claims (an SVG, which can carry script, or bytes that
are no image at all never become an <img>). An image past MAX_IMAGE_BYTES, or past what is
left of MAX_PAGE_IMAGE_BYTES, is a placeholder that says its size. The page's policy allows
`img-src data:` and nothing else, so an image can never make a request.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable

from markupsafe import Markup, escape

from transcript_formats.schema import Image

MAX_IMAGE_BYTES = 2_000_000
MAX_PAGE_IMAGE_BYTES = 16_000_000
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff(head: bytes) -> str | None:
    """The media type the bytes' signature shows, among the four embedded ones."""
    for signature, media_type in _SIGNATURES:
        if head.startswith(signature):
            return media_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def size_label(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.0f} KB"
    return f"{size} bytes"


class ImageBudget:
    """Embeds images for one page, keeping count of the bytes already spent."""

    def __init__(
        self, *, per_image: int = MAX_IMAGE_BYTES, per_page: int = MAX_PAGE_IMAGE_BYTES
    ) -> None:
        self.per_image, self.per_page = per_image, per_page
        self.left = per_page

    def html(self, images: Iterable[Image]) -> Markup:
        figures = [self._figure(image, number) for number, image in enumerate(images, 1)]
        if not figures:
            return Markup("")
        return Markup('<div class="imgs">%s</div>') % Markup("").join(figures)

    def _figure(self, image: Image, number: int) -> Markup:
        data = "".join(image.data.split()) if image.data else ""
        size = len(data) * 3 // 4 - data[-2:].count("=") if data else image.size_bytes
        label = "image" + (f" of {size_label(size)}" if size else "")
        if not data:
            why = "not kept in the log" if not image.size_bytes else "too large to keep"
            return _placeholder(f"{label} not embedded ({why})")
        if size > self.per_image:
            return _placeholder(
                f"{label} not embedded (over the {size_label(self.per_image)} limit per image)"
            )
        if size > self.left:
            limit = size_label(self.per_page)
            return _placeholder(f"{label} not embedded (the page already holds {limit} of images)")
        if not _BASE64.fullmatch(data) or len(data) % 4:
            return _placeholder(f"{label} not embedded (its data is damaged or redacted)")
        media_type = _sniff_base64(data)
        if media_type is None:
            claimed = image.media_type or "unknown type"
            return _placeholder(f"{label} not embedded ({claimed}: not a PNG, JPEG, GIF or WebP)")
        self.left -= size
        alt = f"image {number}, {media_type[6:].upper()}, {size_label(size)}"
        return Markup('<img src="data:%s;base64,%s" alt="%s" loading="lazy">') % (
            media_type,
            Markup(data),  # noqa: S704 (checked: only base64 characters)
            alt,
        )


def _sniff_base64(data: str) -> str | None:
    try:
        head = base64.b64decode(data[:24], validate=True)
    except (binascii.Error, ValueError):
        return None
    return sniff(head)


def _placeholder(text: str) -> Markup:
    return Markup('<span class="img-none">%s</span>') % escape(text)
