#!/usr/bin/env bash
# On the GPU machine, after build:native: the two GPUs started the way a multi-host job starts them,
# with the rendezvous on this machine's first non-loopback address instead of 127.0.0.1 (a job
# across hosts cannot use loopback), and every other rank reached through NVSHMEM puts
# (SWITCHYARD_TRANSPORT=put / --transport put: the path a peer on another host takes):
#   1. torchrun --nnodes 1 --node-rank 0 --master-addr <address>: the Python MoE layer example,
#      both layouts, stores and puts;
#   2. the Node environment start (RANK, WORLD_SIZE, MASTER_ADDR = <address>): one checked step each
#      layout, puts.
# Exits non-zero if any run fails, or if the machine has no non-loopback address.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
addr=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep -v '^$' | head -n 1)
if [ -z "$addr" ]; then
  echo "cluster-launch: no non-loopback address (hostname -I printed '$(hostname -I 2>/dev/null)')"
  exit 1
fi
echo "cluster-launch: rendezvous at $addr ($(hostname))"
export SWITCHYARD_CUDA_LIB=${SWITCHYARD_CUDA_LIB:-$here/build/libswitchyard_cuda.so.1}
export PYTHONPATH=$here/python${PYTHONPATH:+:$PYTHONPATH}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
status=0
port=29531
for layout in masked contiguous; do
  for transport in auto put; do
    port=$((port + 1))
    echo "=== torchrun --nnodes 1 --node-rank 0 --nproc-per-node 2 --master-addr $addr --master-port $port moe_layer.py --layout $layout --transport $transport"
    MASTER_ADDR=$addr timeout 120 torchrun --nnodes 1 --node-rank 0 --nproc-per-node 2 --master-addr "$addr" \
      --master-port "$port" "$here/python/examples/moe_layer.py" --layout "$layout" --transport "$transport" || status=1
  done
done
for layout in masked contiguous; do
  port=$((port + 1))
  echo "=== launch-local.sh 2 $layout (MASTER_ADDR=$addr, SWITCHYARD_TRANSPORT=put)"
  MASTER_ADDR=$addr MASTER_PORT=$port SWITCHYARD_TRANSPORT=put SWITCHYARD_CUDA_RANKS_PER_GPU=1 timeout 120 \
    bash "$here/examples/node/launch-local.sh" 2 "$layout" || status=1
done
exit "$status"
