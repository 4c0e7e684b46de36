"""Upstream KernelBench's own `eval_kernel_against_ref` on one (problem, solution) pair, timed:
the other side of bench/throughput.py's ratio. Run in a fresh process per pair, as a GPU worker
of ours starts an evaluation: torch imported, CUDA not yet initialised, an empty Triton cache.

    python bench/kernelbench_eval.py --tree KB --problem P.py --solution S.py [--backend triton]

Prints one JSON line: wall seconds of the call, and what upstream concluded. Upstream's package
imports LLM clients (openai, litellm) and their helpers (dotenv, tqdm, requests, pydantic) at
module level for its generation scripts; where they are missing, stand-ins are put on the path:
the evaluation never calls the clients, and of pydantic it uses one result class's fields.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

STANDINS = {
    "openai": "class OpenAI:\n    def __init__(self, *a, **k):\n        raise RuntimeError()\n",
    "litellm": "def completion(*a, **k):\n    raise RuntimeError('unused')\n",
    "dotenv": "def load_dotenv(*a, **k):\n    return False\n",
    "tqdm": "def tqdm(*a, **k):\n    raise RuntimeError('unused')\n",
    "requests": "",
    # The evaluation's result class: fields with class defaults, set by keyword.
    "pydantic": (
        "import copy\n"
        "class BaseModel:\n"
        "    def __init__(self, **fields):\n"
        "        for klass in reversed(type(self).__mro__):\n"
        "            for name in getattr(klass, '__annotations__', {}):\n"
        "                if name in vars(klass):\n"
        "                    setattr(self, name, copy.deepcopy(vars(klass)[name]))\n"
        "        for name, value in fields.items():\n"
        "            setattr(self, name, value)\n"
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--problem", type=Path, required=True)
    parser.add_argument("--solution", type=Path, required=True)
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--correct-trials", type=int, default=5)
    parser.add_argument("--perf-trials", type=int, default=100)
    args = parser.parse_args()
    standins = Path(tempfile.mkdtemp(prefix="kb-standins-"))
    for name, source in STANDINS.items():
        try:
            __import__(name)
        except ImportError:
            (standins / f"{name}.py").write_text(source)
    sys.path[:0] = [str(args.tree / "src"), str(standins)]
    import torch  # noqa: F401 - imported before the clock starts, as in a prepared worker
    from kernelbench.eval import eval_kernel_against_ref

    started = time.monotonic()
    result = eval_kernel_against_ref(
        args.problem.read_text(),
        args.solution.read_text(),
        num_correct_trials=args.correct_trials,
        num_perf_trials=args.perf_trials,
        measure_performance=True,
        backend=args.backend,
        build_dir=tempfile.mkdtemp(prefix="kb-build-"),
    )
    wall_s = time.monotonic() - started
    summary = {
        "wall_s": round(wall_s, 3),
        "compiled": getattr(result, "compiled", None),
        "correctness": getattr(result, "correctness", None),
        "runtime_ms": getattr(result, "runtime", None),
    }
    print("KB_RESULT " + json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
