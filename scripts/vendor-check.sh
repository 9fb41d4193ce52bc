#!/usr/bin/env bash
# Runs the vendor sequence of docs/depending.md as written: every ```sh vendor-check block there,
# in order, in one shell, starting in a copy of this checkout named `switchyard` inside an empty
# temporary folder (so `../switchyard-tarballs` and `../my-backend` land beside it, as they would
# beside a vendor's clone). The blocks build and pack the packages, make a backend from
# templates/backend, install the tarballs there, and run its tests and `npx switchyard conformance`.
# Then it checks what the blocks cannot show: nothing the backend loads comes from the repository,
# and the public packages it does not install pack too.
#
# The copy holds the working tree's files as git lists them (tracked and new, less what is ignored),
# so uncommitted changes are what is checked. Only the environment differs from a vendor's: npm's
# audit, funding and notice lines (npm pack's file lists) are off, and turbo reads this checkout's
# build cache (same sources, same outputs), so the copy's build takes seconds once this checkout is
# built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
DOC=docs/depending.md

say() { printf 'vendor-check: %s\n' "$*"; }

# The ```sh vendor-check blocks of the doc, each headed by a no-op naming its line (echoed, as every command is).
blocks=$(node -e '
  const text = require("node:fs").readFileSync(process.argv[1], "utf8");
  const re = /^```sh[ \t]+vendor-check[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  let out = "";
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const line = text.slice(0, m.index).split("\n").length;
    // One command a line: a failure inside `a && b` or `a || b` would not stop the run.
    m[1].split("\n").forEach((l, i) => {
      if (/&&|\|\||;/.test(l.replace(/\s#.*$/, ""))) {
        console.error(`vendor-check: ${process.argv[1]}:${line + 1 + i}: one command a line, without && || or ;`);
        process.exit(2);
      }
    });
    out += `: ${process.argv[1]}:${line}\n${m[1]}`;
  }
  process.stdout.write(out);
' "$DOC")
[ -n "$blocks" ] || { say "$DOC has no \`\`\`sh vendor-check block" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/switchyard-vendor.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/switchyard"
say "copying the checkout to $work/switchyard"
git ls-files -z --cached --others --exclude-standard |
  tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null |
  tar -C "$work/switchyard" -xf -

# Turbo's cache lives beside the main worktree (a linked worktree shares it).
common=$(git rev-parse --path-format=absolute --git-common-dir)
export TURBO_CACHE_DIR="$(dirname "$common")/.turbo/cache"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false npm_config_loglevel=warn

# The blocks run as one script: a cd in one holds for the next; each command is echoed first.
(cd "$work/switchyard" && bash -euo pipefail -c "PS4='\$ '; set -x; $blocks")

backend="$work/my-backend"
say "the backend loads its packages from its own node_modules, not from the repository"
(cd "$backend" && node -e '
  const here = process.cwd();
  for (const p of ["@switchyard/core", "@switchyard/conformance", "@switchyard/conformance/vitest", "@switchyard/cli/package.json"]) {
    const at = require.resolve(p);
    if (!at.startsWith(here + "/node_modules/")) {
      console.error(`vendor-check: ${p} resolved outside the backend: ${at}`);
      process.exit(1);
    }
  }')
say "the other public packages pack"
for p in webgpu-ref cuda cuda-rig; do
  npm pack --dry-run --silent -w "@switchyard/$p" >/dev/null 2>&1 || { say "@switchyard/$p does not pack" >&2; exit 1; }
done
say "ok: every command of $DOC's vendor-check blocks passed"
