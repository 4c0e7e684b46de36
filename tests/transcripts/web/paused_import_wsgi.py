"""The deployed WSGI application, with an import that stops at a chosen point: the kill tests
serve this (gunicorn tests.transcripts.web.paused_import_wsgi:application) to kill the worker
exactly there, not at a moment guessed from the outside.

PAUSE_IMPORT_AT says where: `raw` (the raw log's gzip half written in the work folder) or
`placed` (both files moved into media, the transaction not yet committed). There the import
creates the file PAUSE_IMPORT_MARKER and waits to be killed.
"""

import os
import time
from pathlib import Path

from config.wsgi import application
from transcripts import services, spool

__all__ = ["application"]

PAUSE_AT = os.environ.get("PAUSE_IMPORT_AT", "")
MARKER = Path(os.environ.get("PAUSE_IMPORT_MARKER", "/nonexistent"))


def _pause() -> None:
    MARKER.write_text(str(os.getpid()))
    while True:
        time.sleep(1)


if PAUSE_AT == "raw":

    def _copy_then_pause(source, out) -> None:
        with source:
            out.write(source.read(spool.CHUNK_BYTES))
            out.flush()
            _pause()

    spool._copy = _copy_then_pause

elif PAUSE_AT == "placed":
    place = services.place
    placed: list[Path] = []

    def _place_then_pause(temporary: Path, name: str) -> Path:
        placed.append(place(temporary, name))
        if len(placed) == 2:
            _pause()
        return placed[-1]

    services.place = _place_then_pause
