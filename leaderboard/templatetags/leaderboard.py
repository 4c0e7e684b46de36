from urllib.parse import urlencode

from django import template
from django.utils.html import format_html

register = template.Library()


@register.filter
def pct(value, decimals=0):
    """A share as a percentage; an em dash for a missing value."""
    if value is None or value == "":
        return "—"
    return f"{float(value) * 100:.{int(decimals)}f}%"


@register.filter
def times(value):
    """A speedup as 1.23x; an em dash for a missing value."""
    if value is None or value == "":
        return "—"
    return f"{float(value):.2f}x"


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
