#!/usr/bin/env bash
# Sets up a fresh machine for Switchyard: the software Vulkan driver the WebGPU backend needs
# (where it can be installed), the npm packages, and the TypeScript build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-vulkan.sh || echo "setup: no Vulkan driver; the WebGPU backend will report itself unavailable (see above)"
npm ci --no-audit --no-fund
npx turbo run build
