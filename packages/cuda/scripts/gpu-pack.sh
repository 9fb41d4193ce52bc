#!/usr/bin/env bash
# Packs what a bare GPU machine (no network, no npm, no node_modules) needs to run this package:
# .gpu/app.tar with the built dist of core, conformance, cuda and cuda-rig (the
# session adapter, workers, checks, bench and their command line) and cli (switchyard), and the few
# node_modules they load (the @switchyard links, fast-check, pure-rand, node-addon-api,
# node-api-headers). Sources travel with the working tree; .gpu/ is git-ignored.
# On the GPU machine, from the repository root:
#   source .gpu/env.sh && tar xf .gpu/app.tar && bash packages/cuda/scripts/build-native.sh && node packages/cuda-rig/dist/cli.js checks
# First the native sources are compiled and linked here (check-native.sh, about two minutes with
# nvcc): a build that fails on the GPU machine costs device time, and a single file's compile
# (sass-local.sh) misses what only the device link finds (one device function defined in two
# translation units). GPU_PACK_NATIVE=0 skips that, for a tree whose native sources were checked.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
if [ "${GPU_PACK_NATIVE:-1}" != 0 ]; then
  log=$(mktemp)
  if ! bash packages/cuda/scripts/check-native.sh >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "gpu-pack: the native sources do not build here (check-native.sh above); nothing packed" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
fi
[ -x "$root/../shared/gpu-machine/pack.sh" ] && bash "$root/../shared/gpu-machine/pack.sh" >/dev/null
mkdir -p .gpu
for p in core conformance cuda cuda-rig cli; do
  if [ -f "packages/$p/tsconfig.json" ] && [ -d "packages/$p/src" ]; then
    (cd "packages/$p" && npx tsc -p tsconfig.json)
  fi
done
paths=(packages/core/dist packages/conformance/dist packages/cuda/dist packages/cuda-rig/dist packages/cli/dist
  node_modules/@switchyard node_modules/fast-check node_modules/pure-rand
  node_modules/node-addon-api node_modules/node-api-headers)
tar cf .gpu/app.tar "${paths[@]}"
# The commit the run is of (the GPU machine's copy may have no .git): read by device-run.sh.
echo "$(git rev-parse HEAD)$( [ -n "$(git status --porcelain)" ] && echo ' (dirty)')" > .gpu/commit
du -sh .gpu/app.tar .gpu
