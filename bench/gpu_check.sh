#!/usr/bin/env bash
# The grader's GPU tests and benchmarks in one call on a lent GPU host (no Django there):
#   [STEPS=tests,evaluator,catalog,kernelbench,builds] [KERNELBENCH_TREE=DIR] bash bench/gpu_check.sh [OUT_DIR]
# Writes gpu-tests.log, evaluator-<gpu>.json, catalog-<gpu>.json, kernelbench-<gpu>.json and
# build-stage-<gpu>.json (BUILD_SOLUTIONS, BUILD_BUILDERS: bench/build_stage.py)
# under OUT_DIR (default bench/results). The kernelbench step grades an upstream KernelBench
# checkout (KERNELBENCH_TREE, default var/device/kb, carried there and never committed):
# KB_PARTS, KB_SWEEP, KB_SHARD, KB_WORKERS, KB_UNSEEN and KB_DEADLINE_S pass on to bench/kernelbench_gpu.py.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results}"
steps=",${STEPS:-tests,evaluator,catalog,kernelbench,builds},"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 ARENA_BASELINE_CACHE="${ARENA_BASELINE_CACHE:-/tmp/arena-baselines.json}"
# Candidates run only in an isolating sandbox: bubblewrap, or a copy carried in var/device (the
# binary in var/device/bin, its libraries in var/device/lib, found through its RUNPATH) where the
# host has none.
if ! command -v bwrap >/dev/null && [ -x var/device/bin/bwrap ]; then export PATH="$PWD/var/device/bin:$PATH"; fi
if ! python3 -c "import sys; from sandboxes.backends import bwrap_problem as p; m = p(); print('sandbox:', m or 'bwrap'); sys.exit(bool(m))"; then
  echo "NOTICE: no isolating sandbox on this GPU host; our own test solutions are graded with ARENA_UNSAFE_RUN_UNISOLATED=1"
  export ARENA_UNSAFE_RUN_UNISOLATED=1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.txt"
gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name().replace(' ', '-'))")
status=0
if [[ $steps == *,tests,* ]]; then
  python3 -m pytest --noconftest -p no:cacheprovider -m gpu tests/evaluator/gpu -q -rA ${GPU_TESTS_K:+-k "$GPU_TESTS_K"} 2>&1 \
      | tee "$out/gpu-tests.log"
  status=$(( status || PIPESTATUS[0] ))
fi
if [[ $steps == *,evaluator,* ]]; then
  python3 bench/evaluator.py --out "$out/evaluator-$gpu.json" || status=1
fi
if [[ $steps == *,catalog,* ]]; then
  # The catalogue's eager/SOTA baselines (CATALOG_COMPILE=1 adds torch.compile; slow).
  python3 bench/catalog_gpu.py baselines "$out/catalog-$gpu.json" ${CATALOG_COMPILE:+--compile} \
      | grep -v '^ok' || true
fi
if [[ $steps == *,kernelbench,* ]]; then
  python3 bench/kernelbench_gpu.py --tree "${KERNELBENCH_TREE:-var/device/kb}" \
      --out "$out/kernelbench-$gpu${KB_SUFFIX:-}.json" --parts "${KB_PARTS:-adversarial,examples,sweep}" \
      --sweep "${KB_SWEEP:-42}" --shard "${KB_SHARD:-0/1}" --workers "${KB_WORKERS:-1}" --unseen "${KB_UNSEEN:-5}" \
      --deadline-s "${KB_DEADLINE_S:-540}" || status=1
fi
if [[ $steps == *,builds,* ]]; then
  python3 bench/build_stage.py --solutions "${BUILD_SOLUTIONS:-6}" --builders "${BUILD_BUILDERS:-8}" \
      --out "$out/build-stage-$gpu.json" || status=1
fi
echo "gpu check exit $status"
exit $status
