import os

from django.core.wsgi import get_wsgi_application

from config.page_cache import PageCache

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Public pages that opt in are served whole from a short-lived cache (config/page_cache.py).
application = PageCache(get_wsgi_application())
