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
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c++17 -rdc=true -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC,-Wall -O3
  -I"$pkg/include" -I"$inc" -I"$root/node_modules/node-addon-api" -I"$root/node_modules/node-api-headers/include"
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS)
pids=()
for f in "$pkg"/src/native/kernels/*.cu "$pkg"/src/native/host/*.cc "$pkg"/src/native/binding/*.cc; do
  [ -e "$f" ] || continue
  nvcc "${flags[@]}" -x cu -c "$f" -o "$out/$(basename "$(dirname "$f")")_$(basename "$f").o" -Xptxas -v 2>"$out/$(basename "$(dirname "$f")")_$(basename "$f").log" &
  pids+=("$!:$f")
done
fail=0
for p in "${pids[@]}"; do
  if ! wait "${p%%:*}"; then fail=1; echo "FAILED: ${p#*:}"; cat "$out"/*"$(basename "${p#*:}").log"; fi
done
[ "$fail" = 0 ] && echo "check-native: all sources compile ($inc)"
grep -h "registers\|spill" "$out"/*.log | grep -v "^ptxas info    : Compiling" | sort -u | head -40 || true
exit $fail
