import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fresh_interpreter(code: str) -> list[str]:
    """What `code` prints, a line each, run in an interpreter of its own (nothing imported)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    return done.stdout.splitlines()


def repo_python(*args: str, timeout_s: float = 600) -> subprocess.CompletedProcess[str]:
    """`python ARGS` in a fresh interpreter at the checkout's root, with the checkout importable
    (as a GPU host runs the grader: no install), its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=timeout_s,
        check=False,
    )


def processes_called(name: str) -> list[str]:
    """Live host processes (zombies aside) named `name` with prctl(PR_SET_NAME), in any pid
    namespace: the name is kept across fork, unlike anything set in the environment at run
    time, and the kernel keeps 15 characters of it."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            called = (entry / "comm").read_text().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if called == name and state != "Z":
            found.append(entry.name)
    return found
