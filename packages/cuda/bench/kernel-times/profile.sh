#!/usr/bin/env bash
# On a GPU machine with Nsight Compute (ncu), after the library is built with source lines
# (SWITCHYARD_CUDA_LINEINFO=1): where the contiguous layout's kernels spend their time. Runs the
# host-overhead bench's C driver (one rank) under ncu and profiles one launch of each kernel the
# regex names, in an eager step after the warm-up: speed of light, memory, warp states and stall
# reasons, schedulers, launch and occupancy, then the SASS lines with the most stall samples
# (hot.py). Clocks are left alone (--clock-control none).
#   bash packages/cuda/bench/kernel-times/profile.sh [OUT]
#   PROFILE_POINT=contiguous:4096 PROFILE_KERNEL='contigSend|combine_send'   (the defaults)
#   PROFILE_NCU_ARGS: more ncu flags, e.g. "--cache-control none --warp-sampling-interval 0" for the
#   few microseconds of a masked kernel (caches as the bench leaves them, a sample every 32 cycles)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/switchyard-out}
point=${PROFILE_POINT:-contiguous:4096}
kernels=${PROFILE_KERNEL:-contigSend|combine_send}
tool=profile
# shellcheck source=ncu-step.sh
source "$here/ncu-step.sh"
n=$(($(tr -cd '|' <<<"$kernels" | wc -c) + 1))
name=profile-${point/:/-}
# step.c runs 50 warm-up steps before its eager ones: one launch of each kernel from warm-up step 20 on.
# shellcheck disable=SC2086
"$ncu" --clock-control none ${PROFILE_NCU_ARGS:-} --kernel-name regex:"($kernels)" --launch-skip $((20 * n)) --launch-count "$n" \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
  --section WarpStateStats --section SchedulerStats --section InstructionStats --section LaunchStats \
  --section Occupancy --section SourceCounters --import-source yes -o "$work/$name" \
  "$work/step" "$point" --steps 10 >"$work/ncu.log" 2>&1 || { cat "$work/ncu.log" >&2; exit 1; }
"$ncu" --import "$work/$name.ncu-rep" --print-details all | tee "$out/$name.log"
"$ncu" --import "$work/$name.ncu-rep" --page source --print-source sass --csv >"$work/sass.csv" 2>"$work/sass.err" ||
  cat "$work/sass.err" >&2
python3 "$here/hot.py" "$work/sass.csv" | tee "$out/$name-hot.log" || true
gzip -c "$work/$name.ncu-rep" >"$out/$name.ncu-rep.gz"
