"""`./check [solution.py]`: the grader on the task's visible shapes, run inside a workspace.

This file is the source of the `check` script that arena.workspace writes into every agent
workspace; the two constants below are filled in there. It imports only the grader
(grader), never Django, so it runs wherever the agent runs. It grades the visible
shapes only: unseen shapes are drawn when the arena grades the final solution, and the secret
they come from never reaches a workspace.
"""

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

# Filled in by arena.workspace: the task's manifest without its generalization rules, and the
# folder that holds the installed grader.
VISIBLE_TASK_TOML = ""
PROJECT_ROOT = ""

GENERALIZATION_NOTE = "not checked here: unseen shapes are graded after the run ends"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="./check",
        description="Grade solution.py on the task's visible shapes and print the verdict.",
    )
    parser.add_argument("solution", nargs="?", default="solution.py", help="default: solution.py")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per child process")
    parser.add_argument("--json", action="store_true", help="print the grader's JSON result")
    # torch.compile takes a minute per shape on a GPU: the arena's grading measures it, a quick
    # check by default does not.
    parser.add_argument(
        "--compile-baseline", action="store_true", help="also time torch.compile (slow)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    workspace = Path(__file__).resolve().parent
    solution = Path(args.solution)
    if not solution.is_file():
        print(
            f"check: {args.solution}: file not found; write ModelNew there first", file=sys.stderr
        )
        return 2
    if PROJECT_ROOT and PROJECT_ROOT not in sys.path:
        sys.path.insert(0, PROJECT_ROOT)
    # Run as a script in an agent's workspace: the grader is importable only from here on.
    from grader.cli import render_verdict
    from grader.evaluate import EvaluateOptions, evaluate
    from grader.result import Gate
    from grader.taskspec import TaskError, load_task_folder

    with tempfile.TemporaryDirectory(prefix="check-task-") as tmp:
        folder = Path(tmp)
        (folder / "task.toml").write_text(VISIBLE_TASK_TOML, encoding="utf-8")
        shutil.copyfile(workspace / "reference.py", folder / "reference.py")
        try:
            spec = load_task_folder(folder)
            options = EvaluateOptions(
                timeout_s=args.timeout, unseen_count=0, compile_baseline=args.compile_baseline
            )
            result = evaluate(spec, solution, args.device, options)
        except (TaskError, OSError, ValueError) as exc:
            print(f"check: the grader could not run: {exc}", file=sys.stderr)
            return 2
    result.gates["generalization"] = Gate(None, GENERALIZATION_NOTE)
    if args.json:
        import json

        print(json.dumps(result.to_dict()))
    else:
        print(render_verdict(result))
    return 0 if result.status == "passed" else 1


if __name__ == "__main__":
    sys.exit(main())
