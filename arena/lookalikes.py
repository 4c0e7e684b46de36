"""Look-alike text: the skeleton of UTS #39 (Unicode Security Mechanisms, section 4).

Two strings that a reader cannot tell apart ("alice" in Latin letters and "alice" with a
Cyrillic a, U+0430, for its first letter; "rn" and "m"; "1" and "l") have the same skeleton.
The table of look-alikes is Unicode's confusables.txt as the `confusable-homoglyphs` package
ships it: each line "source -> prototype" stored in both directions, with the prototype's own
entry listing all of its sources. So each class of look-alikes is a star around its prototype,
and the hub of the star is the prototype. (Where a class has two members only, either may stand
for it: a skeleton is compared, never shown; a prototype of several characters is the hub all
the same, as sources are one code point.)
"""

import functools
import unicodedata

from confusable_homoglyphs.confusables import confusables_data

# The table's entries quote right-to-left characters between left-to-right marks.
_QUOTING = str.maketrans("", "", "\u200e\u200f")


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character replaced by its class's prototype, NFD again."""
    prototypes = _prototypes()
    mapped = "".join(prototypes.get(char, char) for char in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each character that is not its class's prototype -> the prototype, in prototypes'
    characters (a prototype of several, such as "rn", is spelled in its characters' own)."""
    links = _links()
    hubs = {char: _hub(char, links) for char in links if len(char) == 1}
    single = {char: hub for char, hub in hubs.items() if len(hub) == 1}
    spelled = {char: "".join(single.get(c, c) for c in hub) for char, hub in hubs.items()}
    return {char: hub for char, hub in spelled.items() if hub != char}


def _links() -> dict[str, list[str]]:
    links: dict[str, list[str]] = {}
    for char, entries in confusables_data.items():
        linked = links.setdefault(char.translate(_QUOTING), [])
        linked.extend(entry["c"].translate(_QUOTING) for entry in entries)
    return links


def _hub(char: str, links: dict[str, list[str]]) -> str:
    linked = links[char]
    if len(set(linked)) != 1:
        return char  # a prototype: several sources map to it
    other = linked[0]
    if len(set(links.get(other, ()))) > 1 or len(other) > 1:
        return other
    return min(char, other)  # a class of two: the same stand-in from either side
