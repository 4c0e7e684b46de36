"""The Django project's wiring: settings, URLs, the Celery app, WSGI and the embedded broker.

Importing this package loads nothing else, so a process that only reads settings (an app's
modules, `manage.py migrate`) gets no Celery. The processes that send or run Celery tasks load
the app themselves: manage.py, config/wsgi.py, `celery -A config` (config/celery.py) and the
test suite's conftest."""
