#!/usr/bin/env bash
# On a GPU machine with Nsight Compute (ncu), after the library is built: how long each kernel of a
# step runs by itself, against the bench's event-timed halves. Runs the host-overhead bench's C
# driver (one rank) under ncu, which times one kernel at a time (gpu__time_duration, caches left
# warm), over a window of eager steps and one of graph replays; times.py prints the medians.
#   bash packages/cuda/bench/kernel-times/run.sh [OUT] [masked:<tokens>...]   (default masked:1 masked:128)
# Masked points only: the kernel filter (every kernel named dispatch or combine: a kernel a stage,
# or one a half under kernel_per_half) and the launch counts assume the masked layout's four stage
# kernels a step. EXPERTS=<n> runs the config with n experts instead of 256 (the report's name says which).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/switchyard-out}
shift || true
points=("$@")
[ ${#points[@]} -gt 0 ] || points=(masked:1 masked:128)
for point in "${points[@]}"; do
  case $point in
    masked:[0-9]*) ;;
    *) echo "kernel-times: $point: only masked:<tokens> points (the contiguous layout's kernels are others)" >&2; exit 2 ;;
  esac
done
tool=kernel-times
# shellcheck source=ncu-step.sh
source "$here/ncu-step.sh"
steps=100  # per mode, after step.c's 50 warm-up steps: eager steps 0-149, then graph replays 0-149
for point in "${points[@]}"; do
  name=${point/:/-}${EXPERTS:+-e$EXPERTS}
  # Stage kernels 4 a step: eager steps 100-119 (skip 400), graph replays 100-119 (skip 4 x 150 + 400).
  for mode in eager:400 graph:1000; do
    "$ncu" --metrics gpu__time_duration.sum --cache-control none --csv --kernel-name regex:'(dispatch|combine)' \
      --launch-skip "${mode#*:}" --launch-count 80 "$work/step" "$point" --steps "$steps" ${EXPERTS:+--experts "$EXPERTS"} >"$work/$name-${mode%%:*}.csv" 2>"$work/$name.err" ||
      { cat "$work/$name.err" >&2; exit 1; }
  done
  python3 "$here/times.py" --point "$point${EXPERTS:+, $EXPERTS experts}" --eager "$work/$name-eager.csv" --graph "$work/$name-graph.csv" | tee "$out/kernel-times-$name.md"
done
