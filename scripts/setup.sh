#!/usr/bin/env bash
# Sets up a fresh machine for Switchyard: the software Vulkan driver the WebGPU backend needs
# (where it can be installed), pytest and a C compiler for the Python package's tests, the npm
# packages, and the TypeScript build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-vulkan.sh || echo "setup: no Vulkan driver; the WebGPU backend will report itself unavailable (see above)"
bash scripts/setup-python.sh || echo "setup: the Python package's tests will fail: no python3 with pytest or no C compiler (see above)"
# `npm install` rather than `npm ci`: the registry reachable here serves only this platform's builds
# of biome, esbuild and rollup, so the lockfile cannot list the others and `npm ci` refuses it as
# out of sync. The committed lockfile still pins every version installed.
npm install --no-audit --no-fund
npx turbo run build
