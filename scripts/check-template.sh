#!/usr/bin/env bash
# Packs the public packages, installs them with the backend template (templates/backend) in a
# temporary folder outside the repository, as a vendor would, and runs the template against the
# suite: its vitest file and the command line. Needs the build (npx turbo run build) first.
#
# Kept fast: the vitest file runs a quick subset (QUICK below: the layout, rows and payload of
# dispatch, combine's accuracy, the round trip, and the bad-input properties), the command line
# one property; the full suite against the same forwarding is what the reference's own run covers.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
QUICK="session/layout,dispatch/rows,dispatch/payload,combine/accuracy,roundtrip/identity,input/*"
work=$(mktemp -d "${TMPDIR:-/tmp}/switchyard-template.XXXXXX")
trap 'rm -rf "$work"' EXIT

step() { printf 'check-template: %s\n' "$*"; }

for p in core conformance; do
  [ -f "packages/$p/dist/index.js" ] || { echo "check-template: packages/$p is not built; run npx turbo run build first" >&2; exit 2; }
done
[ -f packages/cli/dist/main.js ] || { echo "check-template: packages/cli is not built; run npx turbo run build first" >&2; exit 2; }
step "packing @switchyard/core, @switchyard/conformance and @switchyard/cli"
npm pack --silent --pack-destination "$work" -w @switchyard/core -w @switchyard/conformance -w @switchyard/cli >/dev/null
# The other public packages must pack too (their install needs a GPU or Dawn, so only packed here).
for p in webgpu-ref cuda cuda-rig; do
  npm pack --dry-run --silent -w "@switchyard/$p" >/dev/null 2>&1 || { echo "check-template: @switchyard/$p does not pack" >&2; exit 1; }
done

cp -r templates/backend "$work/backend"
rm -rf "$work/backend/node_modules" "$work/backend/.vitest-report.json"
cd "$work/backend"
step "installing the template with the packed tarballs in $work"
# The command line's backends (webgpu-ref, cuda-rig) are optional dependencies: where they cannot be
# fetched (not in the registry, no network) npm leaves them out.
npm install --no-audit --no-fund --prefer-offline --loglevel=error \
  ../switchyard-core-*.tgz ../switchyard-conformance-*.tgz ../switchyard-cli-*.tgz >/dev/null
# Nothing may come from the repository: the packages resolve inside the temporary folder.
node -e '
  const here = process.cwd();
  for (const p of ["@switchyard/core", "@switchyard/conformance", "@switchyard/conformance/vitest", "@switchyard/cli/package.json"]) {
    const at = require.resolve(p);
    if (!at.startsWith(here)) { console.error(`check-template: ${p} resolved outside the template: ${at}`); process.exit(1); }
  }'
step "vitest: $QUICK"
# Its JSON report goes back beside the template, for the closing line of npm test (scripts/test-summary.mjs).
SWITCHYARD_ONLY="$QUICK" npx --no-install vitest run --reporter=dot --reporter=json \
  --outputFile.json="$root/templates/backend/.vitest-report.json"
step "command line"
npx --no-install switchyard --version
npx --no-install switchyard conformance --backend ./src/index.js --only dispatch/rows --runs 5
# A package name resolves from the caller's folder: the template's own name, from its folder.
npx --no-install switchyard conformance --backend my-switchyard-backend --only session/layout --runs 3 >/dev/null
step "ok (from $root)"
