#!/usr/bin/env bash
# On a GPU machine (no network; scikit-build-core, torch and nvidia-nvshmem-cu13 installed for the
# system's python3): proves that `pip install` of this folder builds and ships the library, as a
# user gets it, with nothing from the Node build and no environment variable pointing at anything:
#   1. a virtual environment with the system's packages (torch, NVSHMEM's wheel, scikit-build-core);
#   2. pip install --no-build-isolation --no-index (no dependency fetched), NVSHMEM from its wheel
#      (NVSHMEM_HOME unset), into that environment;
#   3. pip wheel of the same folder, and the libraries inside the wheel listed;
#   4. from a folder outside the repository, without SWITCHYARD_CUDA_LIB and LD_LIBRARY_PATH:
#      import switchyard_cuda, print the file it came from and the library it loaded;
#   5. the MoE layer example (a copy outside the repository) under torchrun on GPUs 0 and 1, masked
#      and contiguous, each checked against plain torch.
# Logs to stdout; the working folders live under $TMPDIR (default /tmp) and are removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sy-pip-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
say() { printf '=== pip-check: %s\n' "$*"; }
# What a user's shell has: none of the build's variables.
clean=(env -u SWITCHYARD_CUDA_LIB -u SWITCHYARD_LAYOUT_LIB -u LD_LIBRARY_PATH -u NVSHMEM_HOME)
py="$work/venv/bin/python"

say "system: $(python3 --version), pip $(python3 -m pip --version | cut -d' ' -f2), scikit-build-core" \
  "$(python3 -c 'import scikit_build_core as m; print(m.__version__)' 2>&1 | tail -1), cmake $(cmake --version | head -1 | cut -d' ' -f3)," \
  "nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
# --without-pip: the system's pip serves the environment (no ensurepip, no network) and installs into it.
python3 -m venv --without-pip --system-site-packages "$work/venv"
# When python3 is itself a virtual environment (torch, scikit-build-core and the NVSHMEM wheel
# installed there), --system-site-packages reaches only its base interpreter's packages: a .pth
# file puts python3's own site-packages behind the new environment's, as a user's would be.
venv_site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -c 'import site; print("\n".join(site.getsitepackages()))' >"$venv_site/outer-environment.pth"
# One build folder for the install and the wheel: the second build reuses the first's objects.
build=(--no-build-isolation --no-index --config-settings=build-dir="$work/build")

say "pip install ${build[*]} $here"
"${clean[@]}" "$py" -m pip install "${build[@]}" "$here"

say "pip wheel ${build[*]} --no-deps $here"
"${clean[@]}" "$py" -m pip wheel "${build[@]}" --no-deps -w "$work/wheel" "$here"
wheel=$(ls "$work"/wheel/switchyard_cuda-*.whl)
say "wheel $(basename "$wheel"): $(du -h "$wheel" | cut -f1)"
"$py" -m zipfile -l "$wheel" | grep -E '\.so' | sed 's/^/  in the wheel: /'

say "import from $work/elsewhere, no SWITCHYARD_CUDA_LIB, no LD_LIBRARY_PATH"
mkdir -p "$work/elsewhere" && cd "$work/elsewhere"
"${clean[@]}" "$py" -c '
import switchyard_cuda, switchyard_cuda._build_config as b
from switchyard_cuda import _abi
lib = _abi.load("cuda")
print("module", switchyard_cuda.__file__)
print("library", switchyard_cuda.library_path(lib))
print("version", switchyard_cuda.__version__, "|", lib.sy_version().decode(), "| NVSHMEM from", b.NVSHMEM_SOURCE)
'
echo "  libraries the process mapped:"
"${clean[@]}" "$py" -c '
from switchyard_cuda import _abi
_abi.load("cuda")
for line in sorted({l.split()[-1] for l in open("/proc/self/maps") if "libnvshmem_host" in l or "switchyard" in l or "libcudart" in l}):
    print("   ", line)
'

cp "$here/examples/moe_layer.py" "$work/elsewhere/"
for layout in masked contiguous; do
  say "torchrun --nproc-per-node 2 moe_layer.py --layout $layout (GPUs 0,1)"
  "${clean[@]}" CUDA_VISIBLE_DEVICES=0,1 NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 \
    timeout 180 "$py" -m torch.distributed.run --nproc-per-node 2 moe_layer.py --layout "$layout"
done
echo "PASS pip-install: built and installed by pip, the wheel holds the library, imported and ran with no environment variable"
