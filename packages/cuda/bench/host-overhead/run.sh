#!/usr/bin/env bash
# On a GPU machine, after the library is built (packages/cuda/build/libswitchyard_cuda.so.1) and
# with torch installed: what the Python package adds to a step over the same step from C.
#   bash packages/cuda/bench/host-overhead/run.sh [OUT] [points...]   (default masked:1 masked:128 contiguous:128)
# Builds step.c, runs it and step.py in alternation (ROUNDS rounds, default 3, each a C process
# then a Python process), then report.py: the Markdown report on stdout, every run's JSON and
# host-overhead.json under OUT. Exits 1 when Python adds more than 5 us per phase somewhere.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/switchyard-out}
shift || true
points=("$@")
[ ${#points[@]} -gt 0 ] || points=(masked:1 masked:128 contiguous:128)
lib=$here/../../build
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/step
cc -std=c11 -O2 -Wall -Wextra "$here/step.c" -I"$here/../../include" -I"$here/../native/include" -L"$lib" \
  -lswitchyard_cuda_bench -lswitchyard_cuda -Wl,-rpath,"$lib" -o "$bin"
export SWITCHYARD_CUDA_LIB=$lib/libswitchyard_cuda.so.1 SWITCHYARD_CUDA_BENCH_LIB=$lib/libswitchyard_cuda_bench.so.1
export NVSHMEM_SYMMETRIC_SIZE=$((2 * 1024 * 1024 * 1024))
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
rounds=${ROUNDS:-3}
for round in $(seq "$rounds"); do
  echo "round $round: C" >&2
  "$bin" "${points[@]}" >"$out/overhead-c-$round.json"
  echo "round $round: Python" >&2
  python3 "$here/step.py" "${points[@]}" >"$out/overhead-python-$round.json"
done
python3 "$here/report.py" --c $(seq -f "$out/overhead-c-%g.json" "$rounds") \
  --python $(seq -f "$out/overhead-python-%g.json" "$rounds") \
  --device "$(nvidia-smi -L 2>/dev/null | head -n 1 || echo unknown)" --commit "${SWITCHYARD_COMMIT:-unknown}" \
  --json "$out/host-overhead.json"
