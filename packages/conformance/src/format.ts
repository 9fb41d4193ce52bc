import type { ConformanceReport, PropertyResult } from "./types.js";

const STATUS = { pass: "PASS", fail: "FAIL", skip: "SKIP" } as const;

function ms(d: number): string {
  return d < 1000 ? `${Math.round(d)} ms` : `${(d / 1000).toFixed(1)} s`;
}

/** Everything about a failure, including the flags that replay it. */
export function formatFailure(r: PropertyResult): string {
  const lines = [`${r.name} failed after ${r.runs} run(s)${r.shrinks ? ` and ${r.shrinks} shrink(s)` : ""}`];
  if (r.counterexample) lines.push(`  case: ${r.counterexample}`);
  lines.push(...(r.error ?? "failed").split("\n").map((l) => `  ${l}`));
  lines.push(`  seed ${r.seed}${r.path ? `, path ${r.path}` : ""}`);
  if (r.replay) lines.push(`  replay: npx switchyard conformance --backend <backend> ${r.replay}`);
  return lines.join("\n");
}

/** The report as a table: status, property, runs, time, and the skip reason or the failure's seed and path. */
export function formatTable(report: ConformanceReport): string {
  const width = Math.max(8, ...report.results.map((r) => r.name.length));
  const rows = report.results.map((r) => {
    const note =
      r.status === "skip"
        ? report.unavailable !== null
          ? "skipped: backend unavailable"
          : `skipped: ${r.reason}`
        : r.status === "fail"
          ? `seed ${r.seed}${r.path ? ` path ${r.path}` : ""}`
          : r.required
            ? ""
            : "(capability-gated)";
    const runs = r.status === "skip" ? "" : String(r.runs);
    const time = r.status === "skip" ? "" : ms(r.durationMs);
    return `${STATUS[r.status]}  ${r.name.padEnd(width)}  ${runs.padStart(5)}  ${time.padStart(8)}  ${note}`;
  });
  const head = `${"".padEnd(4)}  ${"property".padEnd(width)}  ${"runs".padStart(5)}  ${"time".padStart(8)}`;
  const c = report.counts;
  const foot =
    `${report.backend}: ${c.pass} passed, ${c.fail} failed, ${c.skip} skipped in ${ms(report.durationMs)} ` +
    `(seed ${report.seed}, ${report.numRuns} runs per property${report.deep ? ", deep" : ""})`;
  return [head, ...rows, "", foot].join("\n");
}
