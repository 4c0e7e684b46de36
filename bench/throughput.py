"""Grading throughput on a GPU host (no Django needed): where one evaluation's wall time goes.

    python bench/throughput.py [--tree var/device/kb] [--repeats 2] [--out FILE]

For each (task, solution) pair it grades `--repeats` times in a row in one process, as a GPU
worker does, and records the result's phases (evaluate._phases: setup, probe, the candidate's
start-up, compile, correctness and timing, judge, other). The second repeat shows what the
caches (probe verdicts, compile baselines) already save. Pairs: the catalogue's silu with its
Triton solution, and, where an upstream KernelBench checkout is given, upstream's Triton add
example against its reference and level1/19_ReLU with the reference as its own solution.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluator.engine import EvaluateOptions, evaluate  # noqa: E402

SILU_TRITON = REPO / "tests/evaluator/solutions/silu_triton.py"


def pairs(tree: Path | None, folder: Path) -> list[tuple[str, Any, Path]]:
    found: list[tuple[str, Any, Path]] = [("silu + silu_triton", "silu", SILU_TRITON)]
    if tree is None or not tree.is_dir():
        return found
    prompts = tree / "src/kernelbench/prompts"
    found.append(
        (
            "KernelBench model_ex_add + model_new_ex_add_triton",
            prompts / "model_ex_add.py",
            prompts / "model_new_ex_add_triton.py",
        )
    )
    relu = tree / "KernelBench/level1/19_ReLU.py"
    solution = folder / "relu_reference_as_solution.py"
    solution.write_text(relu.read_text() + "\n\nclass ModelNew(Model):\n    pass\n")
    found.append(("KernelBench level1/19_ReLU, reference as solution", relu, solution))
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, default=REPO / "var/device/kb")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch

    gpu = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    out = args.out or REPO / f"bench/results/throughput-{gpu.replace(' ', '-')}.json"
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, task, solution in pairs(args.tree, Path(folder)):
            for repeat in range(args.repeats):
                started = time.monotonic()
                result = evaluate(task, solution, args.device, EvaluateOptions())
                rows.append(
                    {
                        "pair": name,
                        "repeat": repeat,
                        "status": result.status,
                        "ranked": result.ranked,
                        "wall_s": round(time.monotonic() - started, 2),
                        "phases": result.phases,
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    phase_names = sorted({k for row in rows for k in row["phases"]})
    medians = {
        name: round(statistics.median(r["phases"].get(name, 0.0) for r in rows), 2)
        for name in phase_names
    }
    out.write_text(
        json.dumps(
            {
                "gpu": gpu,
                "torch": torch.__version__,
                "command": " ".join(sys.argv),
                "median_phases_s": medians,
                "rows": rows,
            },
            indent=2,
        )
    )
    print(json.dumps(medians))
    return 0


if __name__ == "__main__":
    sys.exit(main())
