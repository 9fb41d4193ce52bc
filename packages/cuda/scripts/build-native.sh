#!/usr/bin/env bash
# Builds the native libraries with CMake (CMakeLists.txt) into build/:
#   build/libswitchyard_cuda.so.1        the product: kernels, NVSHMEM transport and the C ABI (include/),
#                                        exporting exactly its SY_API functions (checked below: check-exports.sh)
#   build/libswitchyard_cuda_bench.so.1  the bench library (bench/native): NCCL baseline, random fills,
#                                        peer-write bench; linked against the product, exports checked too
#   build/switchyard_cuda.node           the Node addon, linked against both (rpath $ORIGIN)
#   build/abi_fuzz                       the C ABI fuzzer (test/native/abi_fuzz), linked against both
#   build/libswitchyard_layout.so  the layout in C alone (host only), and build/sy_layout_cli
# Without nvcc or NVSHMEM it fails (exit 1), saying what is missing and what to set. A caller for which
# a CPU-only machine legitimately has nothing to build passes --if-available: then it prints
# "build:native skipped: <why>" and exits 0.
# SWITCHYARD_CUDA_ARCH overrides 90; SWITCHYARD_PTXAS_VERBOSE=1 puts every kernel's registers,
# shared memory and spills into the log; SWITCHYARD_CUDA_LINEINFO=1 keeps source lines for profilers;
# SWITCHYARD_CUDA_PHASE_CLOCK=1 makes the stage kernels print phase stamps of block 0, =last of each
# kernel's last block, =ender of the block that completes a kernel's grid counter (block 0 where it
# has none) (kernels/phase_clock.cuh: profiling only, never for a release).
# NCCL (the bench library's baseline) is found by CMake: NCCL_HOME, the system's, or the nvidia-nccl
# wheel; without it the baseline is built disabled. SWITCHYARD_BUILD_BENCH=0 builds the product alone
# (-DSY_BUILD_BENCH=OFF: no bench library, an addon without the bench calls).
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)
if_available=0
for arg in "$@"; do
  case $arg in
    --if-available) if_available=1 ;;
    *) echo "build:native: unknown argument $arg (the only one is --if-available)" >&2; exit 2 ;;
  esac
done
missing=()
command -v nvcc >/dev/null 2>&1 ||
  missing+=("nvcc (CUDA) is not on PATH: install the CUDA toolkit and put its bin/ on PATH")
if [ -z "${NVSHMEM_HOME:-}" ]; then
  missing+=("NVSHMEM_HOME is not set")
elif [ ! -f "$NVSHMEM_HOME/include/nvshmem.h" ]; then
  missing+=("NVSHMEM_HOME=$NVSHMEM_HOME has no include/nvshmem.h")
fi
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$if_available" = 1 ]; then
    why=$(printf '%s; ' "${missing[@]}")
    echo "build:native skipped: ${why%; }"
    exit 0
  fi
  {
    echo "build:native failed: cannot build the native library here:"
    printf '  - %s\n' "${missing[@]}"
    echo "Set NVSHMEM_HOME to an NVSHMEM install (include/nvshmem.h, lib/libnvshmem_host.so, lib/libnvshmem_device.a),"
    echo "e.g. the folder of the nvidia-nvshmem-cu13 wheel (pip install nvidia-nvshmem-cu13), with nvcc on PATH:"
    echo "  NVSHMEM_HOME=\$(python3 -c 'import nvidia.nvshmem as m; print(m.__path__[0])') npm run build:native -w @switchyard/cuda"
    echo "(A caller for which a machine without them has nothing to build passes --if-available.)"
  } >&2
  exit 1
fi
command -v cmake >/dev/null 2>&1 || { echo "build:native failed: cmake not found (3.24 or newer is needed)" >&2; exit 1; }
out="$pkg/build"
arch=${SWITCHYARD_CUDA_ARCH:-90}
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cuda_flags=""
[ "${SWITCHYARD_PTXAS_VERBOSE:-0}" = 1 ] && cuda_flags="-Xptxas -v"
[ "${SWITCHYARD_CUDA_LINEINFO:-0}" = 1 ] && cuda_flags="$cuda_flags -lineinfo"  # source lines for profilers
case "${SWITCHYARD_CUDA_PHASE_CLOCK:-0}" in  # kernels print phase stamps: block 0's, or the last block's
  1) cuda_flags="$cuda_flags -DSY_PHASE_CLOCK" ;;
  last) cuda_flags="$cuda_flags -DSY_PHASE_CLOCK -DSY_PHASE_CLOCK_LAST_BLOCK" ;;
  ender) cuda_flags="$cuda_flags -DSY_PHASE_CLOCK -DSY_PHASE_CLOCK_ENDER" ;;
esac
echo "build:native: nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), sm_${arch}, NVSHMEM_HOME=$NVSHMEM_HOME, $(cmake --version | head -1)"
cmake -S "$pkg" -B "$out/cmake" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DNVSHMEM_HOME="$NVSHMEM_HOME" \
  -DSY_CUDA_ARCH="$arch" -DCMAKE_CUDA_FLAGS="$cuda_flags" -DSY_BUILD_BENCH="$([ "${SWITCHYARD_BUILD_BENCH:-1}" = 0 ] && echo OFF || echo ON)" \
  -DCMAKE_LIBRARY_OUTPUT_DIRECTORY="$out" -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$out"
cmake --build "$out/cmake" --parallel "${SWITCHYARD_BUILD_JOBS:-$(nproc)}"
echo "build:native: wrote $(cd "$out" && ls -d libswitchyard_cuda.so* libswitchyard_cuda_bench.so* switchyard_cuda.node abi_fuzz 2>/dev/null | tr '\n' ' ')"
bash "$pkg/scripts/check-exports.sh" "$out/libswitchyard_cuda.so"
[ "${SWITCHYARD_BUILD_BENCH:-1}" = 0 ] || bash "$pkg/scripts/check-exports.sh" "$out/libswitchyard_cuda_bench.so"
