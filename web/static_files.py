"""Collecting the static files where the app serves them, only when they changed.

With DEBUG off the pages name each static file by its content's hash, which only the manifest
that `collectstatic` writes knows (config/settings.py, STORAGES). Collecting hashes and compresses
every file again, about half a minute of CPU, so a process that starts the app (`manage.py
serve`, the test suite) collects only when a source file changed since the last collection: a
digest of the sources' names, sizes and modification times is kept beside the manifest.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command

# collectstatic's own default ignore patterns.
_IGNORED = ["CVS", ".*", "*~"]
STAMP_NAME = ".sources-digest"


def static_sources_digest() -> str:
    """A digest of every file collectstatic would collect (its name, size and mtime)."""
    found = []
    for finder in finders.get_finders():
        for path, storage in finder.list(_IGNORED):
            found.append((getattr(storage, "prefix", None) or "", path, storage.path(path)))
    digest = hashlib.sha256()
    for prefix, path, full in sorted(found):
        stat = os.stat(full)
        digest.update(f"{prefix}/{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def static_files_collect() -> bool:
    """Collect the static files into STATIC_ROOT unless they are current; True if it collected."""
    root = Path(settings.STATIC_ROOT)
    stamp = root / STAMP_NAME
    digest = static_sources_digest()
    current = (root / "staticfiles.json").exists() and stamp.exists()
    if current and stamp.read_text() == digest:
        return False
    call_command("collectstatic", interactive=False, clear=True, verbosity=0)
    stamp.write_text(digest)
    return True
