#!/usr/bin/env bash
# The same bench with two builds of the library, alternating, in one device call: the cost of a
# change measured on the same GPUs and the same warm machine. On the GPU machine, from the
# repository root, after device-run.sh's build step built this tree's library:
#   bash packages/cuda/bench/compare/run.sh <base.tar> <out dir> [rounds] [bench flags...]
# base.tar holds packages/cuda of the base commit (here: git archive <commit> packages/cuda > .gpu/base.tar);
# it is built in a folder of its own and loaded through SWITCHYARD_CUDA_ADDON. Writes
# <out>/compare-{base,head}-<round>.json and prints each run's table; the TypeScript side
# (bench JSON, report) is this tree's for both.
set -euo pipefail
base_tar=$1 out=$2 rounds=${3:-2}
shift 3 || shift $#
root=$(pwd)
base=/tmp/switchyard-base
rm -rf "$base" && mkdir -p "$base" && tar xf "$base_tar" -C "$base"
ln -sfn "$root/node_modules" "$base/node_modules"
(cd "$base/packages/cuda" && bash scripts/build-native.sh >"$out/compare-build-base.log" 2>&1) ||
  { echo "compare: the base library did not build (log $out/compare-build-base.log)"; exit 1; }
cli=packages/cuda-rig/dist/cli.js
for r in $(seq 1 "$rounds"); do
  for which in base head; do
    addon=$root/packages/cuda/build/switchyard_cuda.node
    [ "$which" = base ] && addon=$base/packages/cuda/build/switchyard_cuda.node
    echo "=== compare: round $r, $which"
    SWITCHYARD_CUDA_ADDON=$addon node "$cli" bench "$@" --json "$out/compare-$which-$r.json" \
      --svg "$out/compare-$which-$r.svg" | tail -n 30
  done
done
