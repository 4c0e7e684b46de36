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


@register.simple_tag
def sort_link(key, label, current, filters):
    """A column header that re-sorts the ranking server-side, keeping the filters."""
    query = {
        "category": filters.category,
        "gpu": filters.gpu,
        "suite": filters.suite_version,
        "sort": key,
    }
    href = "?" + urlencode({k: v for k, v in query.items() if v})
    marker = " ▼" if key == current else ""
    return format_html(
        '<a href="{}" class="sort" data-sort="{}">{}{}</a>', href, key, label, marker
    )
