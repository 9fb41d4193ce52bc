#!/usr/bin/env node
// `npm test`: build, lint, typecheck, every package's tests (vitest, each leaving a JSON report),
// the vendor sequence of docs/depending.md as written (scripts/vendor-check.sh: the packed packages
// installed in a backend made from the template, out of tree), then one closing line adding up
// every report (scripts/test-summary.mjs). Dawn's adapter-limit notices (native, on stderr, with
// nothing to act on) are left out of the output. Every step runs with TMPDIR set to a fresh folder,
// removed at the end, so a run leaves nothing in the machine's temporary folder; what the steps left
// in it is listed (each package's own tests also fail on what they leave: test-support/tmpGuard.ts).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const DAWN_NOTICE = /Warning: \w+ artificially reduced from \d+ to \d+/;
const REPORT = ".vitest-report.json";
const TMP = mkdtempSync(join(tmpdir(), "sy-npm-test-"));

/** Runs a command in the repository root, its output passed through less Dawn's notices. */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, TMPDIR: TMP },
      stdio: ["inherit", "pipe", "pipe"],
    });
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      let pending = "";
      from.setEncoding("utf8");
      from.on("data", (chunk) => {
        const lines = (pending + chunk).split("\n");
        pending = lines.pop();
        const kept = lines.filter((l) => !DAWN_NOTICE.test(l));
        if (kept.length > 0) to.write(`${kept.join("\n")}\n`);
      });
      from.on("end", () => {
        if (pending !== "" && !DAWN_NOTICE.test(pending)) to.write(pending);
      });
    }
    child.on("close", (code) => resolve(code ?? 1));
  });
}

for (const dir of [
  "packages/core",
  "packages/conformance",
  "packages/webgpu-ref",
  "packages/cuda",
  "packages/cuda-rig",
  "packages/cli",
])
  rmSync(join(root, dir, REPORT), { force: true });

const vitestArgs = ["--reporter=default", "--reporter=json", `--outputFile.json=${REPORT}`];
const steps = [
  ["build", "npx", ["turbo", "run", "build"]],
  ["lint", "npx", ["biome", "ci", "."]],
  ["typecheck", "npx", ["turbo", "run", "typecheck"]],
  ["test", "npx", ["turbo", "run", "test", "--concurrency=1", "--", ...vitestArgs]],
  ["vendor", "bash", ["scripts/vendor-check.sh"]],
];
const failed = [];
for (const [name, command, args] of steps) {
  const code = await run(command, args);
  if (code !== 0) failed.push(name);
  // Without a build nothing later can run; the other steps each say something on their own.
  if (code !== 0 && name === "build") break;
}
const left = readdirSync(TMP).sort();
rmSync(TMP, { recursive: true, force: true });
if (left.length > 0)
  console.log(`\nleft in the temporary folder by the steps (now removed): ${left.join(", ")}`);
if (failed.length > 0) console.log(`\nfailed steps: ${failed.join(", ")}`);
const summary = await run("node", ["scripts/test-summary.mjs"]);
process.exitCode = failed.length > 0 || summary !== 0 ? 1 : 0;
