"""Starts an agent CLI inside its sandbox and ends its whole process group when told to.

    python launcher.py --cwd WORKSPACE --stdout LOG --stderr ERR --stop STOPFILE -- argv...

The sandbox's own output file gets nothing from the agent: its stdout (the log) and stderr go to
separate files. The group is killed when the worker that started us dies (SIGKILL included:
the kernel sends us SIGTERM through PR_SET_PDEATHSIG), or when STOPFILE appears (the run was
cancelled). Standard library only, run by path inside the sandbox.
"""

import argparse
import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1
POLL_S = 0.5
# Exit statuses the arena reads: the program could not be started; the run was stopped.
NOT_STARTED = 127
STOPPED = 86


def _kill_group(*_: object) -> None:
    # We lead the session the sandbox started, so the group is the agent and all it spawned.
    os.killpg(0, signal.SIGKILL)


def _die_with_parent() -> None:
    parent = os.getppid()
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    # The parent may have died before prctl took effect: then we were re-parented already.
    # (Not "is our parent pid 1": in bwrap's PID namespace the parent is its init, pid 1.)
    if os.getppid() != parent:
        _kill_group()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="launcher")
    for name in ("--cwd", "--stdout", "--stderr", "--stop"):
        parser.add_argument(name, required=True)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _kill_group)
    _die_with_parent()
    stop = Path(args.stop)
    with open(args.stdout, "wb") as out, open(args.stderr, "wb") as err:
        try:
            process = subprocess.Popen(
                args.command, cwd=args.cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
        except OSError as exc:
            err.write(f"{args.command[0]}: cannot be started ({exc.strerror})\n".encode())
            return NOT_STARTED
        while True:
            try:
                returncode = process.wait(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                if stop.exists():
                    err.write(b"launcher: stopped by the arena\n")
                    err.flush()
                    process.kill()
                    process.wait()
                    return STOPPED
    # A signal death (-9) reads as the shell's 128 + signal.
    return returncode if returncode >= 0 else 128 - returncode


if __name__ == "__main__":
    sys.exit(main())
