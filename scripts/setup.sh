#!/usr/bin/env bash
# Sets up a fresh machine for Switchyard: the software Vulkan driver the WebGPU backend needs
# (where it can be installed), pytest and a C compiler for the Python package's tests, the npm
# packages, and the TypeScript build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-vulkan.sh || echo "setup: no Vulkan driver; the WebGPU backend will report itself unavailable (see above)"
bash scripts/setup-python.sh || echo "setup: the Python package's tests will fail: no python3 with pytest or no C compiler (see above)"
# `npm ci`: exactly the lockfile's versions, or a refusal naming what the lockfile misses. It must
# list the optional builds of biome, esbuild, rollup and turbo for every platform their packages
# name: npm ci fetches only this platform's, but refuses a lockfile that leaves any out. A lockfile
# written against a registry that serves only one platform's builds misses the others; rewrite it
# (`npm install --package-lock-only`) against one that serves them all, as the npm registry does.
# It records no download addresses (.npmrc): packages come from the registry npm is configured with.
npm ci --no-audit --no-fund
npx turbo run build
