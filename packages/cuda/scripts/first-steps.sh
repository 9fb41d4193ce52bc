#!/usr/bin/env bash
# A build's first steps, bounded: 5 steps of each layout (masked 1, 128 and 512 tokens: at one rank
# the first two cut rows into 512-byte pieces, the third into 2 KB; contiguous 512) through the
# bench. A library that hangs (a warp waiting inside its own block, which no cross-rank timeout
# ends) or fails a step is found within the limit, not at the device call's. On the GPU
# machine, from the repository root, after a build:
#   bash packages/cuda/scripts/first-steps.sh <ranks> <seconds> <out prefix>
# writes <out prefix>.json and .svg; SWITCHYARD_CUDA_ADDON picks another build's library (as in
# bench/compare/run.sh). Exit status: the bench's, or 124 when it ran past the limit.
set -uo pipefail
[ $# = 3 ] || { echo "usage: first-steps.sh <ranks> <seconds> <out prefix>"; exit 2; }
ranks=$1 limit=$2 prefix=$3
exec timeout --kill-after=5 "$limit" node packages/cuda-rig/dist/cli.js bench --ranks "$ranks" \
  --layouts masked,contiguous --masked-tokens 1,128,512 --contiguous-tokens 512 --steps 5 --warmup 2 --rotate 1 \
  --no-baseline --peers none --json "$prefix.json" --svg "$prefix.svg"
