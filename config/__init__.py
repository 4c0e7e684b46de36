"""The Django project: settings, URLs, the Celery app, WSGI, and what every app shares of
them (typed settings helpers, the page cache, the API's error handling and throttles). The
domain apps (arena, evaluator, tasks, transcripts, leaderboard) live beside it; importing
one of them starts no Celery app."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
