#!/usr/bin/env bash
# Issue 32's figures in one call on a lent GPU host (no Django there):
#   [STEPS=device,pairs,sweep] [PROBLEMS=40] [PASSES=2] [DEADLINE_S=480] bash bench/throughput_check.sh OUT_DIR
# device: the GPU tests of outputs that stay on the device (tests/evaluator/gpu/test_device_outputs.py);
# pairs: bench/throughput.py pairs (cold from the CLI, prepared, and upstream KernelBench's own eval);
# sweep: bench/throughput.py sweep over PROBLEMS level-1 problems, PASSES passes, GPU busy share.
# Needs var/device (bash bench/device_carry.sh CHECKOUT): bubblewrap and upstream's tree in var/device/kb.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results}"
steps=",${STEPS:-device,pairs,sweep},"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 ARENA_BASELINE_CACHE="${ARENA_BASELINE_CACHE:-/tmp/arena-baselines.json}"
if ! command -v bwrap >/dev/null && [ -x var/device/bin/bwrap ]; then export PATH="$PWD/var/device/bin:$PATH"; fi
python3 -c "from sandboxes.backends import bwrap_problem as p; print('sandbox:', p() or 'bwrap')"
gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name().replace(' ', '-'))")
status=0
if [[ $steps == *,device,* ]]; then
  python3 -m pytest --noconftest -p no:cacheprovider -m gpu tests/evaluator/gpu/test_device_outputs.py -q -rA 2>&1 \
      | tee "$out/device-outputs-tests.log"
  status=$(( status || PIPESTATUS[0] ))
fi
if [[ $steps == *,pairs,* ]]; then
  python3 bench/throughput.py pairs --repeats "${REPEATS:-2}" --kb-repeats "${KB_REPEATS:-1}" \
      ${PAIRS_ONLY:+--only "$PAIRS_ONLY"} --out "$out/throughput-pairs-$gpu.json" || status=1
fi
if [[ $steps == *,sweep,* ]]; then
  python3 bench/throughput.py sweep --problems "${PROBLEMS:-40}" --passes "${PASSES:-2}" \
      --deadline-s "${DEADLINE_S:-480}" --out "$out/throughput-sweep-$gpu.json" || status=1
fi
echo "throughput check exit $status"
exit $status
