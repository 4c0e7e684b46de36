"""`python -m grader evaluate ...`: the grader from a shell, on any host with torch (no Django).
`python -m evaluator ...` is the same command.

`python -m grader measure-peaks` measures the device's copy and matmul rates against the
roofline table.

`python -m grader prepare`, a GPU host's install step: where the installed torch ships no
bytecode, the grader's folder of it is filled ahead (bytecode.py), so that the host's first
evaluation starts as fast as its later ones.
"""

import argparse
import contextlib
import gc
import json
import os
import sys
from collections.abc import Iterator, Sequence

from grader import bytecode, prepared
from grader.concealment import environ_conceal
from grader.launch import CHILD_CODE, start_children_now
from grader.options import EvaluateOptions
from grader.result import EvalResult
from grader.taskspec import TaskError
from sandboxes.backends import SANDBOXES, UNSAFE_SWITCH, unsafe_switch_on
from sandboxes.secret_variables import secret_variables


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("evaluate", help="grade one solution on one task")
    run.add_argument("--task", required=True, help="slug, task folder or KernelBench problem .py")
    run.add_argument("--solution", required=True, help="the solution file (ModelNew)")
    run.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    run.add_argument("--timeout", type=float, default=300.0, help="seconds per child process")
    run.add_argument("--sandbox", default="auto", choices=["auto", *sorted(SANDBOXES)])
    run.add_argument(
        "--unsafe-run-unisolated",
        action="store_true",
        help=f"development only: where no isolating sandbox works, run the solution in a plain "
        f"process with your files and network in its reach (also {UNSAFE_SWITCH}=1)",
    )
    run.add_argument(
        "--no-compile-baseline",
        action="store_true",
        help="time the solution against PyTorch eager only, without torch.compile's baseline "
        "(a first compile of the task costs seconds; the reward is the eager speedup either way)",
    )
    run.add_argument("--json", action="store_true", help="print exactly one JSON object")
    peaks = commands.add_parser("measure-peaks", help="measure copy and matmul rates vs the table")
    peaks.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    peaks.add_argument("--size-scale", type=float, default=1.0, help="scale buffers and matrices")
    peaks.add_argument("--json", action="store_true", help="print exactly one JSON object")
    prepare = commands.add_parser(
        "prepare", help="install step: compile the bytecode a host without it lacks"
    )
    prepare.add_argument("--json", action="store_true", help="print exactly one JSON object")
    return parser


def main(argv: Sequence[str] | None = None, *, own_process: bool = False) -> int:
    """`own_process`: the CLI is this process's program (`python -m grader`), so it erases
    the secrets its environment holds before any child starts; a caller that runs main() in a
    process of its own (a test, a notebook) keeps its environment."""
    args = build_parser().parse_args(argv)
    if args.command == "measure-peaks":
        return run_measure_peaks(args)
    if args.command == "prepare":
        try:
            roots = [*bytecode.installed_roots(), *CHILD_CODE]
            report = bytecode.prepare(EvaluateOptions().judge_kernel_cache, roots)
        except OSError as exc:  # the folder cannot be made, or the interpreter not started
            if args.json:
                print(json.dumps({"status": "error", "error": str(exc)}))
            else:
                print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(report))
        elif report["needed"]:
            print(f"bytecode compiled into {report['folder']} in {report['seconds']} s")
        else:
            print("the installed packages have their bytecode: nothing to prepare")
        return 0
    early: prepared.Slot | None = None
    try:
        # One evaluation: its children (probe, candidate, judge) start together, none ahead,
        # each an interpreter of its own: they start before this process imports torch, which
        # a fork server's first child would wait for (forkserver.py), and there is no second
        # evaluation to fork for.
        options = EvaluateOptions(
            timeout_s=args.timeout,
            sandbox=args.sandbox,
            allow_unisolated=args.unsafe_run_unisolated or unsafe_switch_on(),
            prepared=True,
            prepared_ahead=0,
            fork_server=False,
            compile_baseline=not args.no_compile_baseline,
        )
        if own_process:  # the options hold the hidden seed now; nothing else needs a secret
            environ_conceal(secret_variables(os.environ))
            # Its own imports (torch's, as the children's) read and keep their bytecode in the
            # grader's folder where the installed torch ships none (bytecode.py).
            bytecode.use_here(options.judge_kernel_cache)
        # The children import torch while this process does (grader.evaluate imports it), then
        # do their preludes: the task's analysis, the compile baseline's warm-up (preludes.py).
        early = start_children_now(args.device, options, task=args.task)
        with _uncollected():
            from grader.evaluate import evaluate

        result = evaluate(args.task, args.solution, args.device, options)
        prepared.wait_removed()  # the evaluation's folder goes before the command ends
    except (TaskError, OSError, ValueError) as exc:
        if args.json:
            print(json.dumps({"status": "error", "error": str(exc)}))
        else:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        # Children the evaluation never took (it stopped first, or its settings differed) go
        # now, not when the process ends: a caller of main() may run on.
        if early is not None:
            prepared.POOL.let_go(early)
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(render_verdict(result))
    return 0 if result.status == "passed" else 1


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
    """The cyclic collector off while torch and the grader are imported, as in the children
    (child.py): its passes over the imports' objects cost a fifth of the import."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_measure_peaks(args: argparse.Namespace) -> int:
    from grader.measure_peaks import measure_peaks, render_peaks

    try:
        report = measure_peaks(args.device, size_scale=args.size_scale)
    except ValueError as exc:
        if args.json:
            print(json.dumps({"status": "error", "error": str(exc)}))
        else:
            print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report) if args.json else render_peaks(report))
    return 0


def render_verdict(result: EvalResult) -> str:
    reward = "none (untimed)" if result.reward is None else f"{result.reward:g}"
    lines = [f"status: {result.status}   reward: {reward}   device: {result.device}"]
    for name, gate in result.gates.items():
        mark = {True: "PASS", False: "FAIL", None: " -- "}[gate.passed]
        lines.append(f"  [{mark}] {name:<15} {gate.reason}")
        error = gate.detail.get("error")
        if error:
            lines.extend("         " + line for line in str(error).strip().splitlines()[-8:])
    for row in result.per_shape:
        timing = f"{row.candidate_ms.median:.4f} ms" if row.candidate_ms else "untimed"
        verdict = {True: "correct", False: "WRONG", None: "not run"}[row.correct]
        lines.append(f"  shape {row.shape}: {verdict} {timing} {row.reason}".rstrip())
    for flag in result.flags:
        lines.append(f"  flag {flag.code}: {flag.message}")
    return "\n".join(lines)
