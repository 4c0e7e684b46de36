"""Agent names: the form shown, the key that makes two spellings one agent, the look-alike key
that keeps a new agent from passing for an existing one, and the slug of its URLs.

- Shown: NFKC (fullwidth letters, ligatures and other compatibility forms become the plain
  letters they stand for), runs of white space one space, nothing before or after.
- Key: the shown name case-folded, punctuation dropped, spaces and hyphens one hyphen (as a slug
  was, so that "Alice Agent" and "alice-agent" stay one agent), in any script.
- Look-alike key: the same, taken over the name's UTS #39 skeleton (arena/lookalikes.py).
  A name whose look-alike key is another agent's, under another key, is refused.
- Slug: ASCII for URLs, transliterated ("Алиса" -> alisa, "アリス" -> arisu) rather than
  stripped of what is not ASCII; made unique by the service that stores the agent.

Invisible characters (format and control characters, variation selectors, fillers) would let
two names that read the same differ, so a name holding one is refused.
"""

import re
import unicodedata
from dataclasses import dataclass

from anyascii import anyascii
from django.utils.text import slugify

from arena.lookalikes import skeleton

NAME_MAX_CHARS = 100
SLUG_MAX_CHARS = 100
# Room left in a slug for the "-2" that tells it apart from a taken one.
_SLUG_BASE_CHARS = SLUG_MAX_CHARS - 8
# Default-ignorable code points outside the format category (Cf), which is refused whole:
# combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation
# selectors, variation selectors.
_INVISIBLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn"}


class AgentNameRefused(ValueError):
    """The name cannot name an agent, or looks like another agent's; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class AgentName:
    shown: str
    key: str
    lookalike_key: str
    slug_base: str


def agent_name_parse(raw: str) -> AgentName:
    """The forms of a name, or AgentNameRefused naming what is wrong with it."""
    shown = " ".join(unicodedata.normalize("NFKC", raw).split())
    _refuse_invisible(shown)
    if len(shown) > NAME_MAX_CHARS:
        raise AgentNameRefused(
            f"the agent name is {len(shown)} characters long once normalised; "
            f"at most {NAME_MAX_CHARS}"
        )
    folded = unicodedata.normalize("NFKC", shown.casefold())
    key = _fold(folded)
    if not key:
        raise AgentNameRefused("the agent name needs letters or digits")
    return AgentName(
        shown=shown, key=key, lookalike_key=_fold(skeleton(folded)), slug_base=_slug_base(shown)
    )


def _refuse_invisible(name: str) -> None:
    for char in name:
        if unicodedata.category(char) in _REFUSED_CATEGORIES or _INVISIBLE.match(char):
            raise AgentNameRefused(
                f"the agent name holds an invisible or control character (U+{ord(char):04X}); "
                f"use letters, digits, spaces and punctuation"
            )


def _fold(text: str) -> str:
    """Letters (with their marks) and digits kept, spaces and hyphens one hyphen, the rest
    dropped: for ASCII, what django's slugify gives, so keys of old names are their slugs."""
    kept = []
    for char in text:
        if char.isspace() or char == "-":
            kept.append("-")
        elif char == "_" or unicodedata.category(char)[0] in "LMN":
            kept.append(char)
    return re.sub("-{2,}", "-", "".join(kept)).strip("-_")


def _slug_base(shown: str) -> str:
    # A dot becomes a hyphen, so that "gpt-5.1" reads gpt-5-1 rather than gpt-51.
    slug = slugify(anyascii(shown).replace(".", "-"))[:_SLUG_BASE_CHARS].strip("-_")
    return slug or "agent"
