import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { type Backend, referenceBackend } from "@switchyard/core";
import { formatFailure, formatTable } from "../format.js";
import { PROPERTIES } from "../properties/index.js";
import { NAMED_BACKENDS, resolveBackend } from "../resolve.js";
import { runConformance } from "../run.js";
import type { ConformanceOptions, Interruption, ProgressEvent } from "../types.js";
import { type CliIo, INTERRUPT_STATUS, type InterruptSignal } from "./io.js";

/** In a log, a property running longer than this prints a progress line this often (at its next run). */
export const PROGRESS_INTERVAL_MS = 15_000;

function integer(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new UsageError(`${flag} must be an integer, got "${value}"`);
  return n;
}

export class UsageError extends Error {
  override name = "UsageError";
}

/** A stand-in for a named backend whose package cannot be loaded: unavailable, with the reason. */
function unloadable(name: string, reason: string): Backend {
  return {
    name,
    capabilities: referenceBackend.capabilities,
    unavailableReason: async () => reason,
    createSession: async () => {
      throw new Error(reason);
    },
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Progress on stderr. A terminal gets a live line; a log gets a line per property as it ends and,
 * for one running longer than PROGRESS_INTERVAL_MS, a line that often (at its next run), so a log
 * cut short still shows how far it got.
 */
function progress(io: CliIo): (e: ProgressEvent) => void {
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
function formatInterruption(i: Interruption, backend: string): string {
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
      lines.push(`  rerun: switchyard conformance --backend ${backend} ${p.replay}`);
  }
  if (i.notRun.length > 0) lines.push(`not run (${i.notRun.length}): ${i.notRun.join(", ")}`);
  return lines.join("\n");
}

/** `switchyard conformance ...`: returns the exit status. */
export async function conformanceCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      backend: { type: "string", default: "reference" },
      runs: { type: "string" },
      deep: { type: "boolean", default: false },
      seed: { type: "string" },
      path: { type: "string" },
      only: { type: "string" },
      json: { type: "string" },
      "no-shrink": { type: "boolean", default: false },
      "timeout-ms": { type: "string" },
      "allow-unavailable": { type: "boolean", default: false },
      list: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.list) {
    for (const p of PROPERTIES)
      io.out(`${p.name.padEnd(28)} ${p.required ? "required" : "gated   "}  ${p.summary}\n`);
    return 0;
  }
  const spec = values.backend;
  let backend: Backend;
  try {
    backend = await resolveBackend(spec, io.cwd);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (!(spec in NAMED_BACKENDS)) {
      io.err(`${message}\n`);
      return 2;
    }
    backend = unloadable(spec, message);
  }
  const options: ConformanceOptions = {
    deep: values.deep,
    shrink: !values["no-shrink"],
    onProgress: progress(io),
  };
  const runs = integer("--runs", values.runs);
  if (runs !== undefined) options.numRuns = runs;
  const seed = integer("--seed", values.seed);
  if (seed !== undefined) options.seed = seed;
  const timeout = integer("--timeout-ms", values["timeout-ms"]);
  if (timeout !== undefined) options.timeoutMs = timeout;
  if (values.path !== undefined) options.path = values.path;
  if (values.only !== undefined) options.only = values.only;
  if (options.path !== undefined && (values.only === undefined || seed === undefined)) {
    throw new UsageError("--path replays one failure: give --only <property> and --seed <seed> with it");
  }
  // SIGINT / SIGTERM (Ctrl-C, `timeout`) only note the signal and abort the run: runConformance
  // then resolves at once with what finished, and the report goes out below as at a normal end.
  // The handler runs on the event loop: if the run is blocked in a synchronous call (a native
  // backend's), it runs when that call returns.
  let signal: InterruptSignal | null = null;
  const stop = new AbortController();
  options.signal = stop.signal;
  const unsubscribe = io.onInterrupt((s) => {
    signal ??= s;
    stop.abort(s);
  });
  try {
    const report = await runConformance(backend, options);
    if (report.interrupted && io.interactive) io.err("\n");
    if (report.unavailable !== null)
      io.err(`backend ${backend.name} is unavailable: ${report.unavailable}\n`);
    io.out(`\n${formatTable(report)}\n`);
    const failures = report.results.filter((r) => r.status === "fail");
    for (const f of failures) {
      io.out(`\n${formatFailure(f).replace("<backend>", spec)}\n`);
    }
    if (report.interruption !== undefined) io.out(`\n${formatInterruption(report.interruption, spec)}\n`);
    if (values.json !== undefined) {
      await writeFile(values.json, `${JSON.stringify(report, null, 2)}\n`);
      io.err(`report written to ${values.json}\n`);
    }
    if (signal !== null) return INTERRUPT_STATUS[signal];
    if (failures.length > 0) return 1;
    if (report.unavailable !== null) return values["allow-unavailable"] ? 0 : 2;
    return 0;
  } finally {
    unsubscribe();
  }
}
