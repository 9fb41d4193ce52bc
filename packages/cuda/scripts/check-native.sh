#!/usr/bin/env bash
# Compiles every native source (kernels, host core, binding, the C ABI fuzzer in src/native/tools)
# without linking the addon, against the real NVSHMEM headers when NVSHMEM_HOME is set, else
# against scripts/nvshmem-stub. For machines with nvcc but no NVSHMEM: catches compile errors
# before a GPU machine is booked. Without NVSHMEM_HOME it then links the C ABI fuzzer against a
# stand-in NVSHMEM (scripts/nvshmem-stub/nvshmem_stub.cu) and runs its library-level half (no GPU
# needed): every call with NULL, never-created or wrong-kind handles and bad helper arguments.
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
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS
  -DSY_VERSION="\"$(cat "$root/VERSION")\"")  # sy_version's x.y.z, as CMakeLists.txt sets it
pids=()
for f in "$pkg"/src/native/kernels/*.cu "$pkg"/src/native/host/*.cc "$pkg"/src/native/binding/*.cc "$pkg"/src/native/tools/*.cc; do
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
# The C ABI fuzzer's CPU half: linked against the stand-in NVSHMEM and the NCCL-less baseline.
cudart_dir=""
for d in "${CUDA_HOME:-}" "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")" /usr/local/cuda; do
  [ -n "$d" ] && [ -e "$d/lib64/libcudart.so" ] && { cudart_dir=$d/lib64; break; }
done
if [ "$fail" = 0 ] && [ -z "${NVSHMEM_HOME:-}" ] && [ -n "$cudart_dir" ]; then
  layout_objs=()
  for c in "$pkg"/src/native/layout/layout*.c; do  # the C layout (the parameter check uses it)
    [ "$(basename "$c")" = layout_cli.c ] && continue
    "${CC:-cc}" -std=c11 -O2 -fPIC -I"$pkg/include" -c "$c" -o "$out/layout_$(basename "$c").o" 2>>"$out/stub.log" &&
      layout_objs+=("$out/layout_$(basename "$c").o")
  done
  if nvcc "${flags[@]}" -x cu -c "$pkg/scripts/nvshmem-stub/nvshmem_stub.cu" -o "$out/stub.o" 2>"$out/stub.log" &&
    objs=("$out"/kernels_*.o $(ls "$out"/host_*.o | grep -v host_baseline.cc.o) "$out/no_nccl.o" "$out"/tools_*.o
      "${layout_objs[@]}" "$out/stub.o") &&
    nvcc -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC -dlink "${objs[@]}" -o "$out/dlink.o" 2>>"$out/stub.log" &&
    "${CXX:-g++}" -o "$out/abi_fuzz" "${objs[@]}" "$out/dlink.o" -L"$cudart_dir" -lcudart -Wl,-rpath,"$cudart_dir" 2>>"$out/stub.log"; then
    rc=0
    "$out/abi_fuzz" >"$out/abi_fuzz.jsonl" 2>&1 || rc=$?
    [ -n "${ABI_FUZZ_LOG:-}" ] && cp "$out/abi_fuzz.jsonl" "$ABI_FUZZ_LOG"  # every call, one JSON line each
    if [ "$rc" = 0 ]; then
      echo "check-native: abi_fuzz (no GPU, stand-in NVSHMEM): $(tail -n 1 "$out/abi_fuzz.jsonl")"
    else
      fail=1
      echo "FAILED: abi_fuzz (no GPU):"
      grep -v '"ok":true' "$out/abi_fuzz.jsonl" | head -40
    fi
  else
    fail=1
    echo "FAILED: linking abi_fuzz against the stand-in NVSHMEM"
    cat "$out/stub.log"
  fi
fi
# Resource report per kernel: registers, shared memory, spills (the compiler's own figures).
awk '/Compiling entry function/ { match($0, /_ZN2sy[A-Za-z0-9_]+/); fn = substr($0, RSTART, RLENGTH) }
     /spill stores/ { sp = $0; sub(/^ +/, "", sp) }
     /Used [0-9]+ registers/ { u = $0; sub(/.*Used /, "", u); if (fn != "") print fn "\t" u "\t" sp; fn = "" }' "$out"/*.log |
  { command -v c++filt >/dev/null && c++filt || cat; } | sed -E 's/\(anonymous namespace\):://; s/\([^\t]*\)\t/\t/' | sort -u | head -60 || true
exit $fail
