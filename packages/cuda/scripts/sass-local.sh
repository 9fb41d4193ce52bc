#!/usr/bin/env bash
# A kernel's SASS on a machine without a GPU or a disassembler: compiles one kernel file for sm_90
# (as check-native.sh, against the NVSHMEM stub), then prints the innermost loops of the functions
# whose name contains FUNCTION (bench/kernel-times/sass_loops.py, as `device-run.sh sass` does on
# the GPU machine) and keeps the whole listing.
#
#   bash packages/cuda/scripts/sass-local.sh [kernel file, default combine.cu] [FUNCTION, default combine_send] [--with OPCODE]
#
# The listing goes to $SASS_LOCAL_OUT (default /tmp/switchyard-sass)/<file>.sass. The disassembler is
# cuobjdump (with the nvdisasm it runs) from Debian's nvidia-cuda-toolkit (bookworm, non-free: CUDA 11.8), fetched once with
# `apt-get download` into $SASS_LOCAL_CACHE (default ~/.cache/switchyard-sass); nothing is
# installed. That cuobjdump decodes sm_90 but predates the ELF header of nvcc 13's cubins, so the
# script gives a copy of the cubin the older header (ABI version 7, the sm_90 flags 0x5a055a)
# before disassembling; the code is untouched. Checked against `device-run.sh sass` on the same
# commit: the stage loops agree within a few instructions (the GPU machine builds against the real
# NVSHMEM headers).
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)
file=${1:-combine.cu}
function=${2:-combine_send}
shift $(($# < 2 ? $# : 2))
out=${SASS_LOCAL_OUT:-/tmp/switchyard-sass}
cache=${SASS_LOCAL_CACHE:-$HOME/.cache/switchyard-sass}
src=$pkg/src/native/kernels/$file
[ -f "$src" ] || { echo "sass-local: no kernel file $src (give a file of src/native/kernels/)" >&2; exit 2; }
command -v nvcc >/dev/null || { echo "sass-local: nvcc not found (this compiles for sm_90 first)" >&2; exit 2; }
mkdir -p "$out" "$cache"

cuobjdump=$cache/usr/bin/cuobjdump
if [ ! -x "$cuobjdump" ] || [ ! -x "$cache/usr/bin/nvdisasm" ]; then
  echo "sass-local: fetching cuobjdump (Debian bookworm non-free nvidia-cuda-toolkit) into $cache"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$work/non-free.sources"
  mkdir -p "$work/lists/partial"
  apt=(-o Dir::Etc::sourcelist="$work/non-free.sources" -o Dir::Etc::sourceparts=/dev/null -o Dir::State::Lists="$work/lists")
  apt-get "${apt[@]}" update >"$work/update.log" 2>&1 || { cat "$work/update.log" >&2; exit 1; }
  (cd "$work" && apt-get "${apt[@]}" download nvidia-cuda-toolkit >"$work/download.log" 2>&1) ||
    { cat "$work/download.log" >&2; exit 1; }
  dpkg-deb -x "$work"/nvidia-cuda-toolkit_*.deb "$work/x"
  mkdir -p "$cache/usr/bin"
  cp "$work/x/usr/bin/cuobjdump" "$work/x/usr/bin/nvdisasm" "$cache/usr/bin/"  # cuobjdump runs nvdisasm
fi

name=$(basename "$file" .cu)
cubin=$out/$name.cubin
nvcc -std=c++17 -rdc=true -gencode=arch=compute_90,code=sm_90 -O3 -I "$pkg/include" \
  -I "$pkg/scripts/nvshmem-stub/include" -I "$pkg/src/native/kernels" -I "$pkg/src/native" \
  -x cu -cubin -o "$cubin" "$src" -Xptxas -v 2>"$out/$name.ptxas.log"
python3 - "$cubin" "$out/$name.old-header.cubin" <<'PY'
import struct, sys
elf = bytearray(open(sys.argv[1], "rb").read())
if elf[:4] != b"\x7fELF":
    sys.exit("sass-local: not an ELF cubin: " + sys.argv[1])
elf[8] = 7  # EI_ABIVERSION of the CUDA 11/12 cubins
struct.pack_into("<I", elf, 0x30, 0x5A055A)  # e_flags: sm_90, virtual sm_90, 64-bit addresses
open(sys.argv[2], "wb").write(elf)
PY
"$cuobjdump" -sass "$out/$name.old-header.cubin" >"$out/$name.sass"
grep -q "Function :" "$out/$name.sass" || { echo "sass-local: cuobjdump printed no function ($out/$name.sass)" >&2; exit 1; }
python3 "$pkg/bench/kernel-times/sass_loops.py" --function "$function" "$@" "$out/$name.sass"
echo "sass-local: whole listing $out/$name.sass; registers and spills $out/$name.ptxas.log"
