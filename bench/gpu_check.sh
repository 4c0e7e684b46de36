#!/usr/bin/env bash
# The grader's GPU tests and benchmarks in one call on a lent GPU host (no Django there):
#   bash bench/gpu_check.sh [OUT_DIR]
# Writes gpu-tests.log and evaluator-<gpu>.json under OUT_DIR (default bench/results).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 ARENA_BASELINE_CACHE="${ARENA_BASELINE_CACHE:-/tmp/arena-baselines.json}"
# Candidates run only in an isolating sandbox: bubblewrap, or a copy carried in var/device (a
# wrapper in var/device/bin beside its libraries in var/device/lib) where the host has none.
if ! command -v bwrap >/dev/null && [ -x var/device/bin/bwrap ]; then export PATH="$PWD/var/device/bin:$PATH"; fi
if ! python3 -c "import sys; from evaluator.engine.sandbox import bwrap_problem as p; m = p(); print('sandbox:', m or 'bwrap'); sys.exit(bool(m))"; then
  echo "NOTICE: no isolating sandbox on this GPU host; our own test solutions are graded with ARENA_UNSAFE_RUN_UNISOLATED=1"
  export ARENA_UNSAFE_RUN_UNISOLATED=1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.txt"
python3 -m pytest --noconftest -p no:cacheprovider -m gpu tests/evaluator/gpu -q -rA 2>&1 \
    | tee "$out/gpu-tests.log"
tests=${PIPESTATUS[0]}
gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name().replace(' ', '-'))")
python3 bench/evaluator.py --out "$out/evaluator-$gpu.json"
bench=$?
# The catalogue's eager/SOTA baselines (CATALOG_COMPILE=1 adds torch.compile; slow).
python3 bench/catalog_gpu.py baselines "$out/catalog-$gpu.json" ${CATALOG_COMPILE:+--compile} \
    | grep -v '^ok' || true
echo "gpu tests exit $tests, bench exit $bench"
exit $(( tests || bench ))
