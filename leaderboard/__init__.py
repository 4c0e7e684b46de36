"""The read side: selectors that aggregate scores, pages, figures and the read API."""
