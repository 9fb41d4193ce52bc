#!/usr/bin/env bash
# Builds the native addon build/switchyard_cuda.node (kernels + host core + node-addon-api binding)
# with nvcc against NVSHMEM: relocatable device code (-rdc), an explicit device-link step with
# libnvshmem_device.a, then a shared library linked with libnvshmem_host and libcudart. Then the
# C ABI fuzzer build/abi_fuzz (src/native/tools, the same objects without the binding).
# Without nvcc or NVSHMEM_HOME it prints why and exits 0, so `npm ci && npm test` pass on CPU machines.
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$pkg/../.." && pwd)
if ! command -v nvcc >/dev/null 2>&1; then
  echo "build:native skipped: nvcc (CUDA) not found. On a machine with CUDA and NVSHMEM: NVSHMEM_HOME=... npm run build:native -w @switchyard/cuda"
  exit 0
fi
if [ -z "${NVSHMEM_HOME:-}" ] || [ ! -f "$NVSHMEM_HOME/include/nvshmem.h" ]; then
  echo "build:native skipped: NVSHMEM_HOME is not set or has no include/nvshmem.h. Set it to an NVSHMEM install (lib/libnvshmem_host.so, lib/libnvshmem_device.a)."
  exit 0
fi
cuda_home=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
arch=${SWITCHYARD_CUDA_ARCH:-90}
napi_inc="$root/node_modules/node-addon-api"
node_inc="$root/node_modules/node-api-headers/include"
[ -f "$napi_inc/napi.h" ] || napi_inc=$(node -p "require('node-addon-api').include_dir" 2>/dev/null | tr -d '"')
out="$pkg/build"
obj="$out/obj"
mkdir -p "$obj"
gencode="-gencode=arch=compute_${arch},code=sm_${arch}"
# NCCL for the bench's baseline: NCCL_HOME, else the system's (/usr/include/nccl.h + libnccl.so),
# else the nvidia-nccl wheel next to NVSHMEM's. Without it the addon builds with SY_WITH_NCCL=0
# and the baseline reports SY_ERR_UNSUPPORTED.
nccl_inc="" nccl_link=()
for d in "${NCCL_HOME:-}" /usr /usr/local "$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)"; do
  [ -n "$d" ] && [ -f "$d/include/nccl.h" ] || continue
  nccl_inc="$d/include"
  for l in "$d/lib" "$d/lib64" /usr/lib/x86_64-linux-gnu; do
    if [ -e "$l/libnccl.so" ]; then nccl_link=(-L"$l" -lnccl -Wl,-rpath,"$l"); break; fi
    so=$(ls "$l"/libnccl.so.* 2>/dev/null | head -1 || true)
    if [ -n "$so" ]; then nccl_link=("$so" -Wl,-rpath,"$l"); break; fi
  done
  [ ${#nccl_link[@]} -gt 0 ] && break
  nccl_inc=""
done
nccl_flags=(-DSY_WITH_NCCL=0)
[ -n "$nccl_inc" ] && nccl_flags=(-DSY_WITH_NCCL=1 -I"$nccl_inc")
flags=(-std=c++17 -O3 -rdc=true "$gencode" -Xcompiler -fPIC -Xcompiler -fvisibility=hidden
  -I"$pkg/include" -I"$NVSHMEM_HOME/include" -I"$napi_inc" -I"$node_inc" "${nccl_flags[@]}"
  -DNAPI_VERSION=8 -DNODE_ADDON_API_DISABLE_DEPRECATED -DNAPI_CPP_EXCEPTIONS)
echo "build:native: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), sm_${arch}, NVSHMEM_HOME=$NVSHMEM_HOME, NCCL ${nccl_inc:-none (baseline disabled)}"
srcs=("$pkg"/src/native/kernels/*.cu "$pkg"/src/native/host/*.cc "$pkg"/src/native/binding/*.cc)
objs=()
pids=()
for f in "${srcs[@]}"; do
  o="$obj/$(basename "$(dirname "$f")")_$(basename "$f").o"
  objs+=("$o")
  extra=()
  # SWITCHYARD_PTXAS_VERBOSE=1: registers, shared memory and spills of every kernel into the log.
  [ "${SWITCHYARD_PTXAS_VERBOSE:-0}" = 1 ] && [ "${f##*.}" = cu ] && extra=(-Xptxas -v)
  nvcc "${flags[@]}" "${extra[@]}" -x cu -c "$f" -o "$o" &
  pids+=("$!")
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || { echo "build:native: compilation failed"; exit 1; }
# Device link: resolves the kernels' calls into libnvshmem_device.a.
nvcc "$gencode" -Xcompiler -fPIC -dlink "${objs[@]}" -L"$NVSHMEM_HOME/lib" -lnvshmem_device -o "$obj/dlink.o"
# Host link of the shared library (no second device link: plain host compiler).
"${CXX:-g++}" -shared -o "$out/switchyard_cuda.node" "${objs[@]}" "$obj/dlink.o" \
  -L"$NVSHMEM_HOME/lib" -lnvshmem_host -lnvshmem_device "${nccl_link[@]}" -L"$cuda_home/lib64" -lcudart \
  -Wl,-rpath,"$NVSHMEM_HOME/lib" -Wl,-rpath,"$cuda_home/lib64"
echo "build:native: wrote $out/switchyard_cuda.node"
# The C ABI fuzzer (src/native/tools): the same kernel and host objects, no binding, an executable.
# A failure here leaves the addon in place (and says so): the fuzz step then reports it missing.
build_fuzzer() {
  local fuzz_objs=() lib_objs=() f o
  for f in "$pkg"/src/native/tools/*.cc; do
    o="$obj/tools_$(basename "$f").o"
    fuzz_objs+=("$o")
    nvcc "${flags[@]}" -x cu -c "$f" -o "$o" || return 1
  done
  for o in "${objs[@]}"; do case $o in */binding_*) ;; *) lib_objs+=("$o") ;; esac; done
  nvcc "$gencode" -Xcompiler -fPIC -dlink "${lib_objs[@]}" "${fuzz_objs[@]}" -L"$NVSHMEM_HOME/lib" -lnvshmem_device \
    -o "$obj/fuzz_dlink.o" || return 1
  "${CXX:-g++}" -o "$out/abi_fuzz" "${lib_objs[@]}" "${fuzz_objs[@]}" "$obj/fuzz_dlink.o" \
    -L"$NVSHMEM_HOME/lib" -lnvshmem_host -lnvshmem_device "${nccl_link[@]}" -L"$cuda_home/lib64" -lcudart \
    -Wl,-rpath,"$NVSHMEM_HOME/lib" -Wl,-rpath,"$cuda_home/lib64"
}
if build_fuzzer; then
  echo "build:native: wrote $out/abi_fuzz"
else
  echo "build:native: the C ABI fuzzer did not build (the addon did): see the errors above"
fi
