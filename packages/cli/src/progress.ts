import type { Interruption, ProgressEvent } from "@switchyard/conformance";
import type { CliIo } from "./io.js";

/** In a log, a property running longer than this prints a progress line this often (at its next run). */
export const PROGRESS_INTERVAL_MS = 15_000;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Progress on stderr. A terminal gets a live line; a log gets a line per property as it ends and,
 * for one running longer than PROGRESS_INTERVAL_MS, a line that often (at its next run), so a log
 * cut short still shows how far it got.
 */
export function progress(io: CliIo): (e: ProgressEvent) => void {
  let label = "";
  let started = 0;
  let printed = 0;
  return (e) => {
    if (e.kind === "start") {
      label = `[${String(e.index + 1).padStart(2)}/${e.total}] ${e.name}`;
      started = printed = io.now();
      if (io.interactive) io.err(`\r\x1b[K${label}`);
    } else if (e.kind === "run") {
      if (io.interactive) {
        io.err(`\r\x1b[K${label}  case ${e.run}${e.failed ? " (shrinking)" : `/${e.numRuns}`}`);
        return;
      }
      const now = io.now();
      if (now - printed < PROGRESS_INTERVAL_MS) return;
      printed = now;
      const at = e.failed ? `a case failed, shrinking it (run ${e.run})` : `${e.run}/${e.numRuns} runs`;
      io.err(`  ${e.name}: ${at}, ${Math.round((now - started) / 1000)} s\n`);
    } else {
      const r = e.result;
      const status = { pass: "PASS", fail: "FAIL", skip: "SKIP" }[r.status];
      const time = r.status === "skip" ? "" : ` ${Math.round(r.durationMs)} ms`;
      const line = `[${String(e.index + 1).padStart(2)}/${e.total}] ${status} ${r.name}${time}`;
      io.err(io.interactive ? `\r\x1b[K${line}\n` : `${line}\n`);
    }
  };
}

/** What an interruption left unfinished: the property that was running (never a pass) and those not run. */
export function formatInterruption(i: Interruption, backend: string): string {
  const p = i.property;
  const lines: string[] = [];
  if (p === null) lines.push(`INTERRUPTED by ${i.reason} between properties`);
  else if (p.failedRun === undefined) {
    lines.push(
      `INTERRUPTED by ${i.reason}: ${p.name}: ${p.passed} of ${p.numRuns} runs passed before the interruption ` +
        `(${seconds(p.durationMs)})`,
    );
  } else {
    lines.push(
      `INTERRUPTED by ${i.reason}: ${p.name}: run ${p.failedRun} of ${p.numRuns} failed ` +
        `(${p.passed} passed before it); interrupted while shrinking it (${seconds(p.durationMs)})`,
    );
    if (p.error !== undefined) lines.push(...p.error.split("\n").map((l) => `  ${l}`));
    if (p.replay !== undefined)
      lines.push(`  rerun: npx switchyard conformance --backend ${backend} ${p.replay}`);
  }
  if (i.notRun.length > 0) lines.push(`not run (${i.notRun.length}): ${i.notRun.join(", ")}`);
  return lines.join("\n");
}
