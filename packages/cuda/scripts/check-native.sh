#!/usr/bin/env bash
# Compiles every native source without CMake: the product (src/native: kernels, host core, binding),
# the bench library (bench/native) and the C ABI fuzzer (test/native/abi_fuzz), against the real
# NVSHMEM headers when NVSHMEM_HOME is set, else against scripts/nvshmem-stub. For machines with nvcc
# but no NVSHMEM: catches compile errors before a GPU machine is booked. Without NVSHMEM_HOME it then
# links both shared libraries against a stand-in NVSHMEM (scripts/nvshmem-stub/nvshmem_stub.cu, the
# bench library without NCCL) with their export maps, checks their exports (check-exports.sh: the
# product exports exactly include/'s SY_API functions, the bench library exactly switchyard_bench.h's)
# and runs the fuzzer's library-level half (no GPU needed): every call with NULL, never-created or
# wrong-kind handles and bad helper arguments.
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
bench=$pkg/bench/native
flags=(-std=c++17 -rdc=true -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC,-Wall,-fvisibility=hidden -O3
  -I"$pkg/include" -I"$bench/include" -I"$inc" -I"$nccl_inc" -I"$root/node_modules/node-addon-api"
  -I"$root/node_modules/node-api-headers/include" -I"$pkg/src/native/binding" -I"$bench/binding"
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS -DSY_WITH_BENCH=1 -DSY_ABI_FUZZ_BENCH=1
  -DSY_VERSION="\"$(cat "$root/VERSION")\"")  # sy_version's x.y.z, as CMakeLists.txt sets it
pids=()
# Objects are named <group>_<file>.o: src_kernels_, src_host_, src_binding_, bench_kernels_, ..., fuzz_.
compile() { # name source [extra flags...]
  local name=$1 src=$2
  shift 2
  nvcc "${flags[@]}" "$@" -x cu -c "$src" -o "$out/$name.o" -Xptxas -v 2>"$out/$name.log" &
  pids+=("$!:$name")
}
for group in kernels host binding; do
  for f in "$pkg"/src/native/$group/*.cu "$pkg"/src/native/$group/*.cc; do
    [ -e "$f" ] && compile "src_${group}_$(basename "$f")" "$f"
  done
  for f in "$bench"/$group/*.cu "$bench"/$group/*.cc; do
    [ -e "$f" ] && compile "bench_${group}_$(basename "$f")" "$f" -DSY_WITH_NCCL=1
  done
done
for f in "$pkg"/test/native/abi_fuzz/*.cc; do compile "fuzz_$(basename "$f")" "$f"; done
# The baseline as built where no NCCL is found (every call refused with SY_ERR_UNSUPPORTED).
compile no_nccl_baseline.cc "$bench/host/baseline.cc" -DSY_WITH_NCCL=0
fail=0
for p in "${pids[@]}"; do
  if ! wait "${p%%:*}"; then fail=1; echo "FAILED: ${p#*:}"; cat "$out/${p#*:}.log"; fi
done
[ "$fail" = 0 ] && echo "check-native: all sources compile (NVSHMEM $inc, NCCL $nccl_inc)"
# Both libraries against the stand-in NVSHMEM, their exports, and the C ABI fuzzer's CPU half.
cudart_dir=""
for d in "${CUDA_HOME:-}" "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")" /usr/local/cuda; do
  [ -n "$d" ] && [ -e "$d/lib64/libcudart.so" ] && { cudart_dir=$d/lib64; break; }
done
dlink() { nvcc -gencode=arch=compute_90,code=sm_90 -Xcompiler -fPIC -dlink "${@:2}" -o "$1" 2>>"$out/stub.log"; }
if [ "$fail" = 0 ] && [ -z "${NVSHMEM_HOME:-}" ] && [ -n "$cudart_dir" ]; then
  lib=$out/lib
  mkdir -p "$lib"
  layout_objs=()
  for c in "$pkg"/src/native/layout/layout*.c; do  # the C layout (the parameter check uses it)
    [ "$(basename "$c")" = layout_cli.c ] && continue
    "${CC:-cc}" -std=c11 -O2 -fPIC -fvisibility=hidden -I"$pkg/include" -c "$c" -o "$out/layout_$(basename "$c").o" 2>>"$out/stub.log" &&
      layout_objs+=("$out/layout_$(basename "$c").o")
  done
  product=("$out"/src_kernels_*.o "$out"/src_host_*.o "${layout_objs[@]}" "$out/stub.o")
  benchlib=("$out"/bench_kernels_*.o "$out"/bench_host_c_api_bench.cc.o "$out"/bench_host_peer_write.cc.o
    "$out/no_nccl_baseline.cc.o" "$out/src_host_handles.cc.o" "$out/src_host_params_check.cc.o" "$out/stub.o")
  ldflags=(-L"$cudart_dir" -lcudart -Wl,-rpath,"$cudart_dir" -Wl,--no-undefined)
  if nvcc "${flags[@]}" -x cu -c "$pkg/scripts/nvshmem-stub/nvshmem_stub.cu" -o "$out/stub.o" 2>"$out/stub.log" &&
    dlink "$out/dlink_product.o" "${product[@]}" &&
    "${CXX:-g++}" -shared -o "$lib/libswitchyard_cuda.so.1" -Wl,-soname,libswitchyard_cuda.so.1 "${product[@]}" \
      "$out/dlink_product.o" -Wl,--version-script="$pkg/src/native/exports.map" "${ldflags[@]}" 2>>"$out/stub.log" &&
    ln -sf libswitchyard_cuda.so.1 "$lib/libswitchyard_cuda.so" &&
    dlink "$out/dlink_bench.o" "${benchlib[@]}" &&
    "${CXX:-g++}" -shared -o "$lib/libswitchyard_cuda_bench.so.1" -Wl,-soname,libswitchyard_cuda_bench.so.1 "${benchlib[@]}" \
      "$out/dlink_bench.o" -Wl,--version-script="$bench/exports.map" -L"$lib" -lswitchyard_cuda -Wl,-rpath,'$ORIGIN' \
      "${ldflags[@]}" 2>>"$out/stub.log" &&
    ln -sf libswitchyard_cuda_bench.so.1 "$lib/libswitchyard_cuda_bench.so" &&
    dlink "$out/dlink_fuzz.o" "$out"/fuzz_*.o &&
    "${CXX:-g++}" -o "$out/abi_fuzz" "$out"/fuzz_*.o "$out/dlink_fuzz.o" -L"$lib" -lswitchyard_cuda_bench -lswitchyard_cuda \
      -Wl,-rpath,"$lib" -L"$cudart_dir" -lcudart -Wl,-rpath,"$cudart_dir" 2>>"$out/stub.log"; then
    for so in libswitchyard_cuda.so.1 libswitchyard_cuda_bench.so.1; do
      bash "$pkg/scripts/check-exports.sh" "$lib/$so" | sed 's/^/check-native: /' || fail=1
    done
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
    echo "FAILED: linking the libraries or abi_fuzz against the stand-in NVSHMEM"
    cat "$out/stub.log"
  fi
fi
# Resource report per kernel: registers, shared memory, spills (the compiler's own figures).
awk '/Compiling entry function/ { match($0, /_ZN2sy[A-Za-z0-9_]+/); fn = substr($0, RSTART, RLENGTH) }
     /spill stores/ { sp = $0; sub(/^ +/, "", sp) }
     /Used [0-9]+ registers/ { u = $0; sub(/.*Used /, "", u); if (fn != "") print fn "\t" u "\t" sp; fn = "" }' "$out"/*.log |
  { command -v c++filt >/dev/null && c++filt || cat; } | sed -E 's/\(anonymous namespace\):://; s/\([^\t]*\)\t/\t/' | sort -u | head -60 || true
exit $fail
