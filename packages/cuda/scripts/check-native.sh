#!/usr/bin/env bash
# Compiles every native source (kernels, host core, binding) without linking, against the real
# NVSHMEM headers when NVSHMEM_HOME is set, else against scripts/nvshmem-stub. For machines with
# nvcc but no NVSHMEM: catches compile errors before a GPU machine is booked.
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$pkg/../.." && pwd)
command -v nvcc >/dev/null || { echo "check-native: nvcc not found; skipped"; exit 0; }
inc="${NVSHMEM_HOME:+$NVSHMEM_HOME/include}"
inc="${inc:-$pkg/scripts/nvshmem-stub/include}"
# NCCL (the bench's baseline): the real header when there is one, else the stub (compile only).
nccl_inc=$pkg/scripts/nccl-stub/include
for d in "${NCCL_HOME:+$NCCL_HOME/include}" /usr/include /usr/local/include; do
  [ -n "$d" ] && [ -f "$d/nccl.h" ] && { nccl_inc=$d; break; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c++17 -rdc=true -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC,-Wall -O3
  -I"$pkg/include" -I"$inc" -I"$nccl_inc" -I"$root/node_modules/node-addon-api" -I"$root/node_modules/node-api-headers/include"
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS)
pids=()
for f in "$pkg"/src/native/kernels/*.cu "$pkg"/src/native/host/*.cc "$pkg"/src/native/binding/*.cc; do
  [ -e "$f" ] || continue
  nvcc "${flags[@]}" -DSY_WITH_NCCL=1 -x cu -c "$f" -o "$out/$(basename "$(dirname "$f")")_$(basename "$f").o" -Xptxas -v 2>"$out/$(basename "$(dirname "$f")")_$(basename "$f").log" &
  pids+=("$!:$f")
done
# The baseline as built where no NCCL is found (every call refused with SY_ERR_UNSUPPORTED).
nvcc "${flags[@]}" -DSY_WITH_NCCL=0 -x cu -c "$pkg/src/native/host/baseline.cc" -o "$out/no_nccl.o" 2>"$out/no_nccl_baseline.cc.log" &
pids+=("$!:no_nccl/baseline.cc")
fail=0
for p in "${pids[@]}"; do
  if ! wait "${p%%:*}"; then fail=1; echo "FAILED: ${p#*:}"; cat "$out"/*"$(basename "${p#*:}").log"; fi
done
[ "$fail" = 0 ] && echo "check-native: all sources compile (NVSHMEM $inc, NCCL $nccl_inc)"
# Resource report per kernel: registers, shared memory, spills (the compiler's own figures).
awk '/Compiling entry function/ { match($0, /_ZN2sy[A-Za-z0-9_]+/); fn = substr($0, RSTART, RLENGTH) }
     /spill stores/ { sp = $0; sub(/^ +/, "", sp) }
     /Used [0-9]+ registers/ { u = $0; sub(/.*Used /, "", u); if (fn != "") print fn "\t" u "\t" sp; fn = "" }' "$out"/*.log |
  { command -v c++filt >/dev/null && c++filt || cat; } | sed -E 's/\(anonymous namespace\):://; s/\([^\t]*\)\t/\t/' | sort -u | head -60 || true
exit $fail
