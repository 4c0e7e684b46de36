"""Peak memory of refusing a zip bomb, by the command line and by the upload API (no GPU).

    python bench/archives.py [--expanded-bytes 1073741824] [--out bench/results/archives.json]
                             [--baseline-tree DIR]

A zip of one deflated entry of zeros, 1 MB that expands to 1 GiB (bench/archive_bombs.py), the
same entry with headers that claim 1,000 bytes, and the same zeros as a .gz (whose header says
nothing of its size, so only the stream can refuse it) are each refused:
(a) by `python -m transcripts inspect`, in a fresh process, with the default caps, and with the
    ratio check off (`--max-ratio 1000000`), so that the byte cap alone must stop the stream;
(b) by the upload API: Django's test client posts the file to /api/v1/trajectories in a fresh
    process (a temporary SQLite database, migrated, with a task and a token); the request's
    own peak is read from VmHWM, reset just before it, and the whole process's from ru_maxrss;
    the rows and files written afterwards are counted (all must be zero).
Target: every peak under 256 MB. Each command runs under a small Python parent that reports
ru_maxrss of its children: Linux carries a parent's peak into a child across fork and exec, so
the parent must be small (its own peak is reported as `floor_bytes`).
With --baseline-tree (a checkout of an older version, e.g. `git archive <rev> | tar -x -C DIR`)
the command line cases also run there, for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_BYTES = 256 * 1024 * 1024
WORK = REPO / "var" / "bench-archives"


def measure(command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run in the small parent: one command, then its exit status, output and peak as JSON."""
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    print(
        json.dumps(
            {
                "returncode": done.returncode,
                "peak_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
                "floor_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "stdout": done.stdout[-2000:],
                "stderr": done.stderr[-2000:],
            }
        )
    )


def measured(command: list[str], *, cwd: Path = REPO, env: dict[str, str] | None = None) -> dict:
    parent = [sys.executable, __file__, "--measure", str(cwd), json.dumps(env), *command]
    out = subprocess.run(parent, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# -- (a) the command line ----------------------------------------------------------------------


def inspect_case(path: Path, *extra: str, tree: Path = REPO) -> dict:
    result = measured([sys.executable, "-m", "transcripts", "inspect", str(path), *extra], cwd=tree)
    return {
        "command": f"python -m transcripts inspect {path.name} {' '.join(extra)}".strip(),
        "tree": str(tree),
        "returncode": result["returncode"],
        "message": result["stderr"].strip().splitlines()[-1] if result["stderr"].strip() else "",
        "peak_bytes": result["peak_bytes"],
        "floor_bytes": result["floor_bytes"],
        "refused": result["returncode"] != 0,
    }


# -- (b) the upload API, in a child process ----------------------------------------------------


def upload_child(path: str) -> None:
    """In a fresh process: migrate a temporary database, then post the file as a user would."""
    import django

    django.setup()
    from django.core.management import call_command

    import config.celery  # noqa: F401 - the Celery app that an upload's grading is sent through

    call_command("migrate", verbosity=0)
    token, task = _upload_rows()
    from django.conf import settings
    from django.test import Client

    from arena.models import Run
    from transcripts.models import Trajectory

    client = Client()
    # A first request loads the URLconf, DRF and the views (~25 MB): not the upload's cost.
    client.post("/api/v1/trajectories", {}, HTTP_AUTHORIZATION=f"Token {token}")
    rss_before = _status_bytes("VmRSS")
    _reset_peak()
    with open(path, "rb") as upload:
        response = client.post(
            "/api/v1/trajectories",
            {"file": upload, "agent": "bench", "task": task},
            HTTP_AUTHORIZATION=f"Token {token}",
        )
    media = Path(settings.MEDIA_ROOT)
    print(
        json.dumps(
            {
                "status": response.status_code,
                "body": response.json(),
                "rss_before_request_bytes": rss_before,
                "request_peak_bytes": _status_bytes("VmHWM"),
                "process_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "trajectories": Trajectory.objects.count(),
                "runs": Run.objects.count(),
                "media_files": sum(1 for p in media.rglob("*") if p.is_file()),
            }
        )
    )


def _upload_rows() -> tuple[str, str]:
    from django.contrib.auth import get_user_model

    from accounts.services import api_token_create
    from tasks.models import Task

    user = get_user_model().objects.create_user("bench")  # a token, no password
    Task.objects.create(
        slug="bench/zeros",
        title="Zeros",
        category="torch2triton",
        suite="bench",
        dtype="fp32",
        regime="memory",
        folder="bench/zeros",
        version_hash="0" * 64,
    )
    return api_token_create(user=user, name="bench").secret, "bench/zeros"


def _status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> None:
    # "5" resets VmHWM (Linux 4.0+), so the request's peak is not the migration's.
    Path("/proc/self/clear_refs").write_text("5")


def upload_case(path: Path, **settings: str) -> dict:
    with tempfile.TemporaryDirectory(dir=WORK) as data_dir:
        env = {
            key: value
            for key, value in os.environ.items()
            if key
            not in (
                "DATABASE_URL",
                "ARENA_BROKER_URL",
                "ARENA_CACHE_URL",
                "ARENA_SQLITE_PATH",
                "ARENA_MEDIA_ROOT",
            )
        }
        env["DJANGO_SETTINGS_MODULE"] = "config.settings"
        env["ARENA_SECRET_KEY"] = os.environ.get("ARENA_SECRET_KEY") or "bench-archives-only-key"
        env["ARENA_DATA_DIR"] = data_dir
        env.update(settings)
        command = [sys.executable, __file__, "--upload-child", str(path)]
        result = measured(command, env=env)
    child = json.loads(result["stdout"].strip().splitlines()[-1])
    error = child["body"].get("error", {})
    return {
        "upload": path.name,
        "settings": settings,
        "status": child["status"],
        "message": error.get("message", ""),
        "refused": child["status"] >= 400,
        "nothing_written": child["trajectories"] == child["runs"] == child["media_files"] == 0,
        "rss_before_request_bytes": child["rss_before_request_bytes"],
        "request_peak_bytes": child["request_peak_bytes"],
        "request_growth_bytes": child["request_peak_bytes"] - child["rss_before_request_bytes"],
        "peak_bytes": child["process_peak_bytes"],
        "floor_bytes": result["floor_bytes"],
    }


# -- the files, the run, the report -------------------------------------------------------------


def write_bombs(expanded_bytes: int) -> dict[str, Path]:
    from bench.archive_bombs import gzip_bomb, with_declared_size, write_zip_bomb

    WORK.mkdir(parents=True, exist_ok=True)
    paths = {
        "zip": WORK / "bomb.zip",
        "zip_lying": WORK / "lying.zip",
        "gzip": WORK / "bomb.jsonl.gz",
    }
    write_zip_bomb(paths["zip"], expanded_bytes=expanded_bytes, member="bomb.jsonl")
    paths["zip_lying"].write_bytes(with_declared_size(paths["zip"].read_bytes(), 1_000))
    paths["gzip"].write_bytes(gzip_bomb(expanded_bytes=expanded_bytes))
    return paths


def run_cases(paths: dict[str, Path], baseline: Path | None) -> dict[str, list[dict]]:
    ratio_off = ("--max-ratio", "1000000")
    inspect = [
        inspect_case(paths["zip"]),
        inspect_case(paths["zip"], *ratio_off),
        inspect_case(paths["zip_lying"]),
        inspect_case(paths["gzip"]),
        inspect_case(paths["gzip"], *ratio_off),
    ]
    upload = [
        upload_case(paths["zip"]),
        upload_case(paths["zip_lying"]),
        upload_case(paths["gzip"]),
        upload_case(paths["gzip"], ARENA_ARCHIVE_MAX_RATIO="1000000"),
    ]
    results = {"inspect": inspect, "upload": upload}
    if baseline is not None:
        results["inspect_baseline"] = [
            inspect_case(paths[k], tree=baseline) for k in ("zip", "gzip")
        ]
    return results


def table(results: dict, files: dict[str, int]) -> str:
    rows = [("case", "refused", "peak RSS", "message / status")]
    for case in results["inspect"] + results.get("inspect_baseline", []):
        where = "" if case["tree"] == str(REPO) else " [baseline]"
        rows.append(
            (
                case["command"] + where,
                "yes" if case["refused"] else "NO",
                f"{case['peak_bytes'] / 2**20:.0f} MiB",
                f"exit {case['returncode']}: {case['message'][:90]}",
            )
        )
    for case in results["upload"]:
        extra = " ".join(f"{k}={v}" for k, v in case["settings"].items())
        rows.append(
            (
                f"POST {case['upload']} {extra}".strip(),
                "yes" if case["refused"] else "NO",
                f"{case['peak_bytes'] / 2**20:.0f} MiB (request "
                f"+{case['request_growth_bytes'] / 2**20:.0f} over "
                f"{case['rss_before_request_bytes'] / 2**20:.0f})",
                f"{case['status']}: {case['message'][:90]}",
            )
        )
    width = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(width[i]) for i, c in enumerate(r)) for r in rows]
    sizes = ", ".join(f"{name} {size:,} bytes" for name, size in files.items())
    return "\n".join([*lines, f"files: {sizes}"])


def summary(results: dict, expanded_bytes: int, files: dict[str, int]) -> dict:
    """The figures against the target. The web process holds torch from start-up (about 250
    MB before any request), so the upload is judged by what the request adds to it."""
    inspect, upload = results["inspect"], results["upload"]
    figures = {
        "expanded_bytes": expanded_bytes,
        "files": files,
        "target_bytes": TARGET_BYTES,
        "all_refused": all(c["refused"] for c in inspect + upload),
        "nothing_written": all(c["nothing_written"] for c in upload),
        "inspect_max_peak_bytes": max(c["peak_bytes"] for c in inspect),
        "upload_max_request_growth_bytes": max(c["request_growth_bytes"] for c in upload),
        "upload_rss_before_request_bytes": max(c["rss_before_request_bytes"] for c in upload),
        "upload_max_peak_bytes": max(c["peak_bytes"] for c in upload),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    figures["met"] = (
        figures["all_refused"]
        and figures["nothing_written"]
        and figures["inspect_max_peak_bytes"] < TARGET_BYTES
        and figures["upload_max_request_growth_bytes"] < TARGET_BYTES
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--expanded-bytes", type=int, default=1 << 30)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "archives.json")
    parser.add_argument("--baseline-tree", type=Path, default=None)
    parser.add_argument("--measure", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.add_argument("--upload-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        cwd, env, *command = args.measure
        measure(command, cwd=Path(cwd), env=json.loads(env))
        return
    if args.upload_child:
        sys.path.insert(0, str(REPO))
        upload_child(args.upload_child)
        return
    sys.path.insert(0, str(REPO))
    paths = write_bombs(args.expanded_bytes)
    files = {path.name: path.stat().st_size for path in paths.values()}
    results = run_cases(paths, args.baseline_tree)
    results["summary"] = summary(results, args.expanded_bytes, files)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results, files))
    figures = results["summary"]
    print(
        f"inspect: max peak {figures['inspect_max_peak_bytes'] / 2**20:.0f} MiB; upload: the "
        f"request's max growth {figures['upload_max_request_growth_bytes'] / 2**20:.0f} MiB "
        f"over a process at {figures['upload_rss_before_request_bytes'] / 2**20:.0f} MiB before "
        f"it (max peak {figures['upload_max_peak_bytes'] / 2**20:.0f} MiB); target < 256 MiB: "
        f"{'met' if figures['met'] else 'MISSED'}; all refused: {figures['all_refused']}; "
        f"nothing written: {figures['nothing_written']}"
    )
    print(f"written to {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    if not figures["met"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
