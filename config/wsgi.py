import os

from django.core.wsgi import get_wsgi_application

import config.celery  # noqa: F401 - the Celery app that the web process sends tasks through
from web.page_cache import PageCache

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Public pages that opt in are served whole from a short-lived cache (web/page_cache.py).
application = PageCache(get_wsgi_application())
