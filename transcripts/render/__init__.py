"""HTML rendering of parsed transcripts with Jinja2. Plain Python."""
