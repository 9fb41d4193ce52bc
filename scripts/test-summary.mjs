#!/usr/bin/env node
// Adds up the vitest JSON reports that `npm test` leaves (`.vitest-report.json` in every package
// with a test script) and prints one line: "N passed, N failed, N skipped in K reports". Exit
// status 1 when a test failed, a test file could not run, or an expected report is missing (its
// run crashed or never started).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
export const REPORT = ".vitest-report.json";

/** The folders that must have left a report: packages with a test script. */
function expectedFolders() {
  const packages = readdirSync(join(root, "packages"))
    .map((name) => join("packages", name))
    .filter((dir) => {
      const file = join(root, dir, "package.json");
      return existsSync(file) && JSON.parse(readFileSync(file, "utf8")).scripts?.test !== undefined;
    });
  return packages;
}

const totals = { passed: 0, failed: 0, skipped: 0 };
const problems = [];
for (const dir of expectedFolders()) {
  const file = join(root, dir, REPORT);
  if (!existsSync(file)) {
    problems.push(`${dir}: no test report (its tests did not run to the end)`);
    continue;
  }
  const r = JSON.parse(readFileSync(file, "utf8"));
  totals.passed += r.numPassedTests;
  totals.failed += r.numFailedTests;
  totals.skipped += r.numPendingTests + r.numTodoTests;
  const broken = (r.testResults ?? []).filter(
    (f) => f.status === "failed" && f.assertionResults.length === 0,
  );
  for (const f of broken) problems.push(`${dir}: ${f.name} could not run: ${f.message.split("\n")[0]}`);
  if (!r.success && r.numFailedTests === 0 && broken.length === 0)
    problems.push(`${dir}: vitest reported no success`);
}
for (const p of problems) console.log(`test-summary: ${p}`);
const reports = expectedFolders().length;
console.log(
  `${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped in ${reports} reports` +
    (problems.length > 0 ? ` (${problems.length} problem${problems.length === 1 ? "" : "s"} above)` : ""),
);
process.exit(totals.failed > 0 || problems.length > 0 ? 1 : 0);
