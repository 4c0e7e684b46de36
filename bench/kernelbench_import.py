"""How long `manage.py import_kernelbench` takes on an upstream checkout, on this machine.

    python bench/kernelbench_import.py CHECKOUT [--out bench/results/kernelbench-import.json]

Imports the checkout twice into a fresh data folder and a fresh SQLite database (the second run
must report every problem unchanged), and checks that the source tree is left as it was.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def manage(*args: str, env: dict[str, str]) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.monotonic() - started, done.stdout.strip()


def tree_state() -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/kernelbench-import.json")
    args = parser.parse_args()
    before = tree_state()
    with tempfile.TemporaryDirectory() as data:
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in ("DATABASE_URL", "ARENA_IMPORTED_CATALOG_DIR")
        }
        env.update(ARENA_DATA_DIR=data, ARENA_SECRET_KEY=env.get("ARENA_SECRET_KEY", "bench"))
        manage("migrate", "-v0", env=env)
        first_s, first = manage("import_kernelbench", str(args.checkout), env=env)
        second_s, second = manage("import_kernelbench", str(args.checkout), env=env)
    result = {
        "cpus": os.cpu_count(),
        "first_s": round(first_s, 1),
        "first": first.splitlines()[-2:],
        "second_s": round(second_s, 1),
        "second": second.splitlines()[-2:],
        "source_tree_unchanged": tree_state() == before,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if result["source_tree_unchanged"] else 1


if __name__ == "__main__":
    sys.exit(main())
