#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    import config.celery  # noqa: F401 - the Celery app that commands send their tasks through

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
