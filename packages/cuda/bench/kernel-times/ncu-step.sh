# Sourced by run.sh and profile.sh (with $here, $out and $tool set): finds Nsight Compute ($ncu),
# makes $out and a scratch folder ($work, removed on exit), and builds the host-overhead bench's C
# driver there ($work/step, one rank on GPU 0) against the built library.
lib=$here/../../build
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1 || true)
if [ -z "$ncu" ]; then
  echo "$tool: no ncu on this machine (looked on PATH, /usr/local/cuda*/bin, /opt/nvidia/nsight-compute)" >&2
  exit 2
fi
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -std=c11 -O2 -Wall "$here/../host-overhead/step.c" -I"$here/../../include" -I"$here/../native/include" \
  -L"$lib" -lswitchyard_cuda_bench -lswitchyard_cuda -Wl,-rpath,"$lib" -o "$work/step"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
