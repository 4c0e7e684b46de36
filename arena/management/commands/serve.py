"""`python manage.py serve`: the web server and a Celery worker together, in the foreground.

Ctrl-C (or SIGTERM) stops both; if either one exits, the other is stopped too.
"""

import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

from web.static_files import static_files_collect

STOP_GRACE_S = 10


def all_queues() -> list[str]:
    """The queues of this deployment's settings, each once."""
    named = [
        "default",
        settings.ARENA_AGENTS_QUEUE,
        settings.ARENA_BUILD_QUEUE,
        settings.ARENA_GPU_QUEUE,
    ]
    return list(dict.fromkeys(q for q in named if q))


class Command(BaseCommand):
    help = "Run the web server and a Celery worker (every queue: default, agents, build, gpu)."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1:8000", help="address:port to serve on")
        parser.add_argument("--queues", default=",".join(all_queues()))

    def handle(self, *args, addr: str, queues: str, **options):
        if not settings.DEBUG:
            # The pages name static files by their content's hash, which only the collected
            # manifest knows; with DEBUG on they name the source files instead.
            static_files_collect()
        manage = [sys.executable, "manage.py"]
        commands = {
            "web": [*manage, "runserver", addr, "--noreload"],
            "worker": [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--queues",
                queues,
                "--concurrency",
                "1",
                "--loglevel",
                "INFO",
            ],
        }
        procs = {name: subprocess.Popen(cmd) for name, cmd in commands.items()}
        self.stdout.write(
            f"Kernel Arena on http://{addr}/ (web pid {procs['web'].pid}, "
            f"worker pid {procs['worker'].pid}); Ctrl-C stops both."
        )
        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while not stopping and all(p.poll() is None for p in procs.values()):
            time.sleep(0.2)
        for name, proc in procs.items():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            elif not stopping:
                self.stderr.write(f"{name} exited with code {proc.returncode}; stopping the rest")
        deadline = time.monotonic() + STOP_GRACE_S
        for proc in procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
