import math
from urllib.parse import urlencode

from django import template
from django.utils.html import format_html

from arena.run_verdicts import Verdict, verdict_of_score
from leaderboard.figures import PALETTE_SIZE, agent_style_index

register = template.Library()

# The matrix's colour classes of a ranked cell's best speedup, in powers of two on each side of
# 1x: slower than eager in pinks, faster in greens, so no slow run reads as a fast one. A
# speedup of exactly 1x is "not faster" and takes the slower side, as the performance gate
# does. (class, legend label) from the slowest.
SPEED_BINS = (
    ("speed-m4", "< 1/8\N{MULTIPLICATION SIGN}"),
    ("speed-m3", "1/8\N{EN DASH}1/4\N{MULTIPLICATION SIGN}"),
    ("speed-m2", "1/4\N{EN DASH}1/2\N{MULTIPLICATION SIGN}"),
    ("speed-m1", "1/2\N{EN DASH}1\N{MULTIPLICATION SIGN}"),
    ("speed-p1", "1\N{EN DASH}2\N{MULTIPLICATION SIGN}"),
    ("speed-p2", "2\N{EN DASH}4\N{MULTIPLICATION SIGN}"),
    ("speed-p3", "4\N{EN DASH}8\N{MULTIPLICATION SIGN}"),
    ("speed-p4", "\N{GREATER-THAN OR EQUAL TO} 8\N{MULTIPLICATION SIGN}"),
)
_SPEED_STEPS = len(SPEED_BINS) // 2


@register.filter
def speed_bin(speedup) -> str:
    """The colour class of a speedup: one bin per power of two, the outer ones open-ended."""
    if speedup is None or speedup <= 0:
        return ""
    if speedup > 1.0:
        step = min(_SPEED_STEPS, math.floor(math.log2(speedup)) + 1)
        return f"speed-p{step}"
    step = min(_SPEED_STEPS, math.floor(-math.log2(speedup)) + 1)
    return f"speed-m{step}"


@register.filter
def agent_color(agent) -> str:
    """The class of the agent's colour swatch: its colour on every figure."""
    return f"agent-color-{agent_style_index(agent.pk) % PALETTE_SIZE}"


@register.filter
def score_verdict(score) -> Verdict:
    """The verdict of a score row (arena.run_verdicts)."""
    return verdict_of_score(score)


@register.inclusion_tag("leaderboard/_verdict.html")
def verdict_badge(verdict: Verdict | None, detail: bool = True):
    """A verdict's word in its colour, with its flag codes (each linked to what it means) or
    its failing gate; "—" for none."""
    return {"verdict": verdict, "detail": detail}


@register.filter
def pct(value, decimals=0):
    """A share as a percentage; an em dash for a missing value."""
    if value is None or value == "":
        return "—"
    return f"{float(value) * 100:.{int(decimals)}f}%"


@register.filter
def times(value):
    """A speedup as 1.23x, and one under 0.1x to two significant digits (0.0066x), so that a
    slow measured run never prints as the 0.01x floor; an em dash for a missing value."""
    if value is None or value == "":
        return "—"
    number = float(value)
    return f"{number:.2f}x" if abs(number) >= 0.1 else f"{number:.2g}x"


@register.filter
def get(mapping, key):
    return mapping.get(key) if hasattr(mapping, "get") else None


@register.filter
def gpu_short(name):
    """A GPU's name without its maker's prefix, for narrow cells (the full name as a title)."""
    text = str(name or "")
    for prefix in ("NVIDIA ", "AMD "):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


@register.filter
def dictsort_items(mapping):
    """A dict's items, largest value first, then by key."""
    return sorted(mapping.items(), key=lambda kv: (-kv[1], kv[0])) if mapping else []


@register.simple_tag
def sort_link(key, label, current, filters, tip=""):
    """A column header that re-sorts the ranking server-side, keeping the filters; `tip` is
    the header's tooltip."""
    query = {
        "category": filters.category,
        "gpu": filters.gpu,
        "suite": filters.suite_version,
        "sort": key,
    }
    href = "?" + urlencode({k: v for k, v in query.items() if v})
    marker = " ▼" if key == current else ""
    link = '<a href="{}" class="sort" data-sort="{}" title="{}">{}{}</a>'
    return format_html(link, href, key, tip, label, marker)
