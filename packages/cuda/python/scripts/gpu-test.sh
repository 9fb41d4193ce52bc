#!/usr/bin/env bash
# On the GPU machine, after build:native (packages/cuda/build/libswitchyard_cuda.so.1): runs the
# Python package from source (PYTHONPATH; SWITCHYARD_CUDA_LIB names that library) through its tests
# on one GPU, then the MoE layer example under torchrun on every GPU, both layouts, eager and
# captured. (pip-check.sh, device-run's pip-install step, proves the package as pip builds it.)
# Logs under $1 (default /tmp/switchyard-out).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/switchyard-out}
mkdir -p "$out"
export SWITCHYARD_CUDA_LIB=${SWITCHYARD_CUDA_LIB:-$here/../build/libswitchyard_cuda.so.1}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
status=0
export PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}
(cd "$here" && python3 -m pytest -q -rs tests) || status=1
# Processes per run: every GPU once, and 2 processes sharing GPU 0 (several NVSHMEM PEs on one
# GPU; SWITCHYARD_TORCHRUN_PROCS overrides the list).
gpus=$(nvidia-smi -L | wc -l)
for procs in ${SWITCHYARD_TORCHRUN_PROCS:-$gpus 2}; do
  for run in "masked" "masked --graph" "contiguous"; do
    echo "=== torchrun --nproc-per-node $procs moe_layer.py --layout $run"
    timeout 120 torchrun --nproc-per-node "$procs" "$here/examples/moe_layer.py" --layout $run || status=1
  done
done
exit "$status"
