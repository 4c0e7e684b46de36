#!/usr/bin/env bash
# Issue 32's figures on a lent host of several GPUs, one job per GPU, all at once:
#   SWEEP_GPUS="0 1 2" PAIRS="3:add,GELU,silu 3:ReLU:0 0:Softmax:0" [PROBLEMS=40] [PASSES=2] \
#     [DEADLINE_S=480] [TRACE=1] [REPEATS=1] [KB_REPEATS=1] [IN_FLIGHT=2] [ONLY=a,b] \
#     [NO_DEVICE_AHEAD=1] [PROFILE=1] [QUEUE=1] [ROUNDS=auto] [PREPARE=1] [CLI_AGAIN=1] \
#     bash bench/throughput_host.sh OUT_DIR
# sweep: bench/throughput.py sweep, its problems split over SWEEP_GPUS (--part i/n), merged into
#   one file (evaluations per GPU-hour over the GPUs' summed wall, per pass); with IN_FLIGHT=K,
#   K parts grade on each of those GPUs at once, sharing it (--evaluations-per-gpu K,
#   grader/gpu_share.py), and each GPU's wall is counted once; with QUEUE=1 they take the GPU's
#   problems from one queue (--queue), as a deployment's workers take jobs, rather than in turn;
#   ROUNDS=auto: two candidate rounds where a plan's outputs pass the device budget (--candidate-rounds);
# pairs: bench/throughput.py pairs for each PAIRS entry (gpu:names[:repeats]; repeats 0 grades
#   only the cold command line against upstream's eval), merged into one file.
# A GPU's jobs run one after another (its sweep part first), the GPUs' at once.
# A GPU's sweep parts share one baseline and probe cache; each queue's pairs have their own.
# Needs var/device (bash bench/device_carry.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results}"
mkdir -p "$out"
work=$(mktemp -d)
# As a deployment grades: a hidden seed, so that a solution graded again meets the same unseen
# shapes (and the probe's cached verdicts on them).
export PYTHONUNBUFFERED=1 ARENA_HIDDEN_SEED="${ARENA_HIDDEN_SEED:-throughput-bench}"
if ! command -v bwrap >/dev/null && [ -x var/device/bin/bwrap ]; then export PATH="$PWD/var/device/bin:$PATH"; fi
python3 -c "from sandboxes.backends import bwrap_problem as p; print('sandbox:', p() or 'bwrap')"
gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name().replace(' ', '-'))")
trace=${TRACE:+--trace}
read -r -a sweep_gpus <<< "${SWEEP_GPUS:-}"
flight=${IN_FLIGHT:-1}
n=$(( ${#sweep_gpus[@]} * flight ))
# Each queue runs its jobs one after another: a GPU's sweep part first, then its pairs in order.
# A queue is named GPU.J; with IN_FLIGHT=K a GPU has K queues, each with a part of the sweep.
declare -A queue
i=0
for g in "${sweep_gpus[@]}"; do
  for j in $(seq 0 $((flight - 1))); do queue[$g.$j]+="sweep:$i "; i=$((i + 1)); done
done
k=0
for job in ${PAIRS:-}; do queue[${job%%:*}.0]+="pairs:${job#*:}:$k "; k=$((k + 1)); done
run_queue() {
  local q=$1 g=${1%%.*} item names rest repeats
  export CUDA_VISIBLE_DEVICES=$g ARENA_BASELINE_CACHE=$work/baselines-$q.json ARENA_PROBE_CACHE=$work/probes-$q.json
  for item in ${queue[$q]}; do
    if [[ $item == sweep:* ]]; then
      i=${item#sweep:}
      # A GPU's sweep parts share its probe and baseline caches, as the grading processes of
      # one GPU worker do: a task probed by one part is not probed again by another.
      ARENA_BASELINE_CACHE=$work/baselines-gpu$g.json ARENA_PROBE_CACHE=$work/probes-gpu$g.json \
      python3 bench/throughput.py sweep --part "$i/$n" --problems "${PROBLEMS:-40}" --passes "${PASSES:-2}" \
        --deadline-s "${DEADLINE_S:-480}" --evaluations-per-gpu "$flight" --barrier "$work/barrier-$g" \
        ${ONLY:+--only "$ONLY"} ${NO_DEVICE_AHEAD:+--no-device-ahead} ${QUEUE:+--queue} ${PROFILE:+--profile "$out/profile-$i.txt"} \
        ${ROUNDS:+--candidate-rounds "$ROUNDS"} \
        $trace --out "$work/sweep-$i.json" > "$work/sweep-$i.log" 2>&1
    else
      rest=${item#pairs:}; names=${rest%%:*}; rest=${rest#*:}
      repeats=${REPEATS:-1}; [[ $rest == *:* ]] && { repeats=${rest%%:*}; rest=${rest#*:}; }
      python3 bench/throughput.py pairs --only "$names" --repeats "$repeats" \
        --kb-repeats "${KB_REPEATS:-1}" $trace ${PREPARE:+--prepare} ${CLI_AGAIN:+--cli-again} --out "$work/pairs-$rest.json" > "$work/pairs-$rest.log" 2>&1
    fi
  done
}
for q in "${!queue[@]}"; do run_queue "$q" & done
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
