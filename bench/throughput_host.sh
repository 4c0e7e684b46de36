#!/usr/bin/env bash
# Issue 32's figures on a lent host of several GPUs, one job per GPU, all at once:
#   SWEEP_GPUS="0 1" PAIRS="2:add,GELU,silu 3:ReLU,Softmax" [PROBLEMS=40] [PASSES=2] \
#     [DEADLINE_S=480] [TRACE=1] [REPEATS=1] [KB_REPEATS=1] bash bench/throughput_host.sh OUT_DIR
# sweep: bench/throughput.py sweep, its problems split over SWEEP_GPUS (--part i/n), merged into
#   one file (evaluations per GPU-hour over the GPUs' summed wall, per pass);
# pairs: bench/throughput.py pairs on each GPU named in PAIRS (gpu:names), merged into one file.
# Every job has its own baseline and probe caches. Needs var/device (bash bench/device_carry.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results}"
mkdir -p "$out"
work=$(mktemp -d)
export PYTHONUNBUFFERED=1
if ! command -v bwrap >/dev/null && [ -x var/device/bin/bwrap ]; then export PATH="$PWD/var/device/bin:$PATH"; fi
python3 -c "from sandboxes.backends import bwrap_problem as p; print('sandbox:', p() or 'bwrap')"
gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name().replace(' ', '-'))")
trace=${TRACE:+--trace}
read -r -a sweep_gpus <<< "${SWEEP_GPUS:-}"
n=${#sweep_gpus[@]}
for i in "${!sweep_gpus[@]}"; do
  g=${sweep_gpus[$i]}
  CUDA_VISIBLE_DEVICES=$g ARENA_BASELINE_CACHE=$work/baselines-$g.json ARENA_PROBE_CACHE=$work/probes-$g.json \
    python3 bench/throughput.py sweep --part "$i/$n" --problems "${PROBLEMS:-40}" --passes "${PASSES:-2}" \
      --deadline-s "${DEADLINE_S:-480}" $trace --out "$work/sweep-$i.json" > "$work/sweep-$i.log" 2>&1 &
done
for job in ${PAIRS:-}; do
  g=${job%%:*}
  CUDA_VISIBLE_DEVICES=$g ARENA_BASELINE_CACHE=$work/baselines-$g.json ARENA_PROBE_CACHE=$work/probes-$g.json \
    python3 bench/throughput.py pairs --only "${job#*:}" --repeats "${REPEATS:-1}" \
      --kb-repeats "${KB_REPEATS:-1}" $trace --out "$work/pairs-$g.json" > "$work/pairs-$g.log" 2>&1 &
done
wait
status=0
if [ "$n" -gt 0 ]; then
  python3 bench/throughput.py merge "$work"/sweep-*.json --out "$out/throughput-sweep-$gpu.json" || status=1
fi
if [ -n "${PAIRS:-}" ]; then
  python3 - "$out/throughput-pairs-$gpu.json" "$work"/pairs-*.json <<'PY' || status=1
import json, sys
parts = [json.load(open(p)) for p in sys.argv[2:]]
merged = {k: parts[0][k] for k in ("gpu", "torch")}
merged["commands"] = [p["command"] for p in parts]
merged["median_phases_s"] = [p["median_phases_s"] for p in parts]
merged["pairs"] = [row for p in parts for row in p["pairs"]]
json.dump(merged, open(sys.argv[1], "w"), indent=1)
for row in merged["pairs"]:
    print(json.dumps({k: v for k, v in row.items() if k not in ("rows", "kernelbench_rows")}))
PY
fi
tail -n 40 "$work"/*.log > "$out/throughput-host.log"
echo "throughput host exit $status"
exit $status
