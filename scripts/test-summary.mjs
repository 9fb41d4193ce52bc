#!/usr/bin/env node
// Reads a test log on stdin (turbo running vitest in each package), echoes nothing, and prints one
// closing line that adds up every package's vitest "Tests" line: "N passed, N failed, N skipped".
import { readFileSync } from "node:fs";

const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const log = readFileSync(0, "utf8").replace(ansi, "");
const totals = { passed: 0, failed: 0, skipped: 0 };
let files = 0;
for (const line of log.split("\n")) {
  const m = line.match(/\bTests\s+(.*)\((\d+)\)\s*$/);
  if (!m) continue;
  files++;
  for (const part of m[1].split("|")) {
    const p = part.trim().match(/^(\d+)\s+(passed|failed|skipped|todo)/);
    if (p) totals[p[2] === "todo" ? "skipped" : p[2]] += Number(p[1]);
  }
}
if (files === 0) {
  console.log("no vitest summary found in the log");
  process.exit(1);
}
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(totals.failed > 0 ? 1 : 0);
