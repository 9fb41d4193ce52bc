#!/usr/bin/env bash
# The same bench with two builds of the library, alternating, in one device call: the cost of a
# change measured on the same GPUs and the same warm machine. On the GPU machine, from the
# repository root, after device-run.sh's build step built this tree's library:
#   bash packages/cuda/bench/compare/run.sh <base.tar> <out dir> [rounds] [bench flags...]
# base.tar holds packages/cuda of the base commit (here: git archive <commit> packages/cuda > .gpu/base.tar);
# it is built in a folder of its own and loaded through SWITCHYARD_CUDA_ADDON. Writes
# <out>/compare-{base,head}-<round>.json and prints each run's table; the TypeScript side
# (bench JSON, report) is this tree's for both.
# More builds in the same rotation: COMPARE_VARIANTS="name=path.tar ..." (each tar as base.tar; its
# runs are compare-<name>-<round>.json; report.mjs --base/--head compares any two sides).
# COMPARE_REUSE=1 keeps the libraries an earlier run built (the same tars, e.g. at another --ranks).
set -euo pipefail
base_tar=$1 out=$2 rounds=${3:-2}
shift 3 || shift $#
root=$(pwd)
mkdir -p "$out"
base=/tmp/switchyard-base
# side name -> its build folder ("" for this tree's); built side by side.
declare -A dir=([base]=$base [head]="")
sides=(base head)
for v in ${COMPARE_VARIANTS:-}; do
  name=${v%%=*} tar=${v#*=}
  [[ "$name" =~ ^[a-z0-9-]+$ && "$name" != base && "$name" != head && -f "$tar" ]] ||
    { echo "compare: COMPARE_VARIANTS entry '$v' is not name=existing.tar (name: a-z, 0-9, -; not base or head)"; exit 2; }
  dir[$name]=/tmp/switchyard-variant-$name
  sides+=("$name")
done
pids=()
for which in "${sides[@]}"; do
  d=${dir[$which]}
  [ -n "$d" ] || continue
  # COMPARE_REUSE=1: a side already built by an earlier run of this script in this machine's session
  [ -n "${COMPARE_REUSE:-}" ] && [ -f "$d/packages/cuda/build/switchyard_cuda.node" ] && continue
  tar=$base_tar
  for v in ${COMPARE_VARIANTS:-}; do [ "${v%%=*}" = "$which" ] && tar=${v#*=}; done
  rm -rf "$d" && mkdir -p "$d" && tar xf "$tar" -C "$d"
  ln -sfn "$root/node_modules" "$d/node_modules"
  (cd "$d/packages/cuda" && bash scripts/build-native.sh >"$out/compare-build-$which.log" 2>&1) &
  pids+=("$!:$which")
done
for p in "${pids[@]}"; do
  wait "${p%%:*}" || { echo "compare: the ${p#*:} library did not build (log $out/compare-build-${p#*:}.log)"; exit 1; }
done
cli=packages/cuda-rig/dist/cli.js
for r in $(seq 1 "$rounds"); do
  for which in "${sides[@]}"; do
    addon=$root/packages/cuda/build/switchyard_cuda.node
    [ -n "${dir[$which]}" ] && addon=${dir[$which]}/packages/cuda/build/switchyard_cuda.node
    echo "=== compare: round $r, $which"
    SWITCHYARD_CUDA_ADDON=$addon node "$cli" bench "$@" --json "$out/compare-$which-$r.json" \
      --svg "$out/compare-$which-$r.svg" | tail -n 30
  done
done
