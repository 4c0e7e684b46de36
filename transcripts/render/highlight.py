"""Server-side syntax highlighting of source code (Pygments escapes what it emits)."""

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

MAX_HIGHLIGHT_CHARS = 400_000


def python_to_html(source: str) -> str:
    # Pygments escapes every token it emits; the result is safe to mark safe in a template.
    formatter = HtmlFormatter(linenos="table", cssclass="highlight", wrapcode=True)
    return highlight(source[:MAX_HIGHLIGHT_CHARS], PythonLexer(), formatter)
