#!/usr/bin/env bash
# Starts N processes of env_step.mjs on this host the way torchrun would (RANK, WORLD_SIZE,
# LOCAL_RANK, MASTER_ADDR (default 127.0.0.1), MASTER_PORT) with one job secret, all on GPU 0 when N > the GPUs
# (SWITCHYARD_CUDA_RANKS_PER_GPU, default N; more than 2 a GPU need an MPS daemon started first).
#   bash packages/cuda/examples/node/launch-local.sh <N> [masked|contiguous]
# Exits non-zero if any rank fails.
set -uo pipefail
n=${1:?usage: launch-local.sh <ranks> [masked|contiguous]}
layout=${2:-masked}
here=$(cd "$(dirname "$0")" && pwd)
secret="launch-local-$$-$RANDOM"
pids=()
for ((r = 0; r < n; r++)); do
  RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} MASTER_PORT=${MASTER_PORT:-29400} \
    SWITCHYARD_JOB_SECRET=$secret SWITCHYARD_CUDA_RANKS_PER_GPU=${SWITCHYARD_CUDA_RANKS_PER_GPU:-$n} \
    node "$here/env_step.mjs" "$layout" &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit "$status"
