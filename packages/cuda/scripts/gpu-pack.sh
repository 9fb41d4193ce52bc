#!/usr/bin/env bash
# Packs what a bare GPU machine (no network, no npm, no node_modules) needs to run this package:
# .gpu/app.tar with the built dist of core, conformance, cuda and cuda-rig (the
# session adapter, workers, checks, bench and their command line) and cli (switchyard), and the few
# node_modules they load (the @switchyard links, fast-check, pure-rand, node-addon-api,
# node-api-headers). Sources travel with the working tree; .gpu/ is git-ignored.
# On the GPU machine, from the repository root:
#   source .gpu/env.sh && tar xf .gpu/app.tar && bash packages/cuda/scripts/build-native.sh && node packages/cuda-rig/dist/cli.js checks
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
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
