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
# COMPARE_REUSE=1 keeps a library an earlier run built from the same tar (its sha256), e.g. at another --ranks.
set -euo pipefail
base_tar=$1 out=$2 rounds=${3:-2}
shift 3 || shift $#
root=$(pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# side name -> its build folder ("" for this tree's) and its tar; built side by side.
declare -A dir=([base]=/tmp/switchyard-base [head]="") src=([base]=$base_tar)
sides=(base head)
for v in ${COMPARE_VARIANTS:-}; do
  name=${v%%=*} tar=${v#*=}
  [[ "$name" =~ ^[a-z0-9-]+$ && "$name" != base && "$name" != head && -f "$tar" ]] ||
    { echo "compare: COMPARE_VARIANTS entry '$v' is not name=existing.tar (name: a-z, 0-9, -; not base or head)"; exit 2; }
  [ -z "${src[$name]:-}" ] || { echo "compare: COMPARE_VARIANTS names '$name' twice"; exit 2; }
  dir[$name]=/tmp/switchyard-variant-$name src[$name]=$tar
  sides+=("$name")
done
killTree() { # a process and everything it started
  local c
  for c in $(pgrep -P "$1"); do killTree "$c"; done
  kill "$1" 2>/dev/null || true
}
declare -A building=()  # pid -> side
for which in "${sides[@]}"; do
  d=${dir[$which]}
  [ -n "$d" ] || continue
  sum=$(sha256sum <"${src[$which]}" | cut -d' ' -f1)
  if [ -n "${COMPARE_REUSE:-}" ] && [ -f "$d/packages/cuda/build/switchyard_cuda.node" ] &&
    [ "$(cat "$d/built-from" 2>/dev/null)" = "$sum" ]; then
    continue
  fi
  rm -rf "$d" && mkdir -p "$d" && tar xf "${src[$which]}" -C "$d"
  ln -sfn "$root/node_modules" "$d/node_modules"
  (cd "$d/packages/cuda" && bash scripts/build-native.sh >"$out/compare-build-$which.log" 2>&1 && echo "$sum" >"$d/built-from") &
  building[$!]=$which
done
while [ "${#building[@]}" -gt 0 ]; do  # the first build that fails stops the others
  if wait -n -p done "${!building[@]}"; then
    unset "building[$done]"
  else
    echo "compare: the ${building[$done]} library did not build (log $out/compare-build-${building[$done]}.log)"
    for q in "${!building[@]}"; do killTree "$q"; done
    exit 1
  fi
done
cli=packages/cuda-rig/dist/cli.js
addonOf() { # a side's addon
  if [ -n "${dir[$1]}" ]; then echo "${dir[$1]}/packages/cuda/build/switchyard_cuda.node"
  else echo "$root/packages/cuda/build/switchyard_cuda.node"; fi
}
# Each side's first steps (scripts/first-steps.sh) before any round: a library that hangs or fails a
# step stops the comparison within COMPARE_FIRST_STEPS_S (default 60) seconds a side.
ranks=1 prev=
for a in "$@"; do
  [ "$prev" = --ranks ] && ranks=$a
  prev=$a
done
first=/tmp/switchyard-first-steps
mkdir -p "$first"
for which in "${sides[@]}"; do
  echo "=== compare: $which, first steps"
  if ! SWITCHYARD_CUDA_ADDON=$(addonOf "$which") bash packages/cuda/scripts/first-steps.sh "$ranks" \
    "${COMPARE_FIRST_STEPS_S:-60}" "$first/$which" >"$out/compare-first-steps-$which.log" 2>&1; then
    echo "compare: the $which library did not run 5 steps of each layout at $ranks ranks within" \
      "${COMPARE_FIRST_STEPS_S:-60} s (log $out/compare-first-steps-$which.log); nothing compared"
    exit 1
  fi
done
for r in $(seq 1 "$rounds"); do
  for which in "${sides[@]}"; do
    echo "=== compare: round $r, $which"
    SWITCHYARD_CUDA_ADDON=$(addonOf "$which") node "$cli" bench "$@" --json "$out/compare-$which-$r.json" \
      --svg "$out/compare-$which-$r.svg" | tail -n 30
  done
done
