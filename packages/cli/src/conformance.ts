import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ConformanceOptions, ConformanceReport } from "@switchyard/conformance";
import {
  formatTable,
  PROPERTIES,
  runConformance,
  selectProperties,
  validateCapabilities,
} from "@switchyard/conformance";
import type { Backend } from "@switchyard/core";
import { loadBackend, unavailableReason } from "./backend.js";
import { formatFailures } from "./failures.js";
import { type CliIo, INTERRUPT_STATUS, type InterruptSignal } from "./io.js";
import { formatInterruption, progress } from "./progress.js";
import { checkWritable, integerFlag, UsageError } from "./usage.js";

export { PROGRESS_INTERVAL_MS } from "./progress.js";

const OPTIONS = {
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
} as const;

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS }>>["values"];

/** The run's options from the flags; every usage error is found here, before anything runs. */
function optionsOf(values: Values): ConformanceOptions {
  const options: ConformanceOptions = { deep: values.deep, shrink: !values["no-shrink"] };
  const runs = integerFlag("--runs", values.runs, 1);
  if (runs !== undefined) options.numRuns = runs;
  const seed = integerFlag("--seed", values.seed);
  if (seed !== undefined) options.seed = seed;
  const timeout = integerFlag("--timeout-ms", values["timeout-ms"], 1);
  if (timeout !== undefined) options.timeoutMs = timeout;
  if (values.only !== undefined) {
    try {
      selectProperties(PROPERTIES, values.only);
    } catch (e) {
      throw new UsageError(
        `--only ${values.only}: ${(e as Error).message.replace(/^selectProperties: /, "")}`,
      );
    }
    options.only = values.only;
  }
  if (values.path !== undefined) {
    const one = values.only !== undefined && selectProperties(PROPERTIES, values.only).length === 1;
    if (!one || seed === undefined) {
      throw new UsageError(
        "--path replays one failure: give it with --only <one property> and --seed <seed>, as the replay line prints them",
      );
    }
    options.path = values.path;
  }
  return options;
}

/** The report when the backend cannot run here: its reason once, and one line (no SKIP rows). */
function printUnavailable(io: CliIo, report: ConformanceReport): void {
  const n = report.counts.skip;
  io.out(
    `${report.backend}: not run: ${n} propert${n === 1 ? "y" : "ies"} skipped, the backend is unavailable\n`,
  );
}

/** `switchyard conformance ...`: returns the exit status. */
export async function conformanceCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  if (values.list) {
    for (const p of PROPERTIES)
      io.out(`${p.name.padEnd(28)} ${p.required ? "required" : "gated   "}  ${p.summary}\n`);
    return 0;
  }
  const options = optionsOf(values);
  if (values.json !== undefined) await checkWritable("--json", values.json, io.cwd);
  const spec = values.backend;
  const backend: Backend = await loadBackend(spec, io.cwd);
  validateCapabilities(String(backend.name), backend.capabilities);
  const why = await unavailableReason(backend);
  if (why !== null) io.err(`backend ${backend.name} is unavailable: ${why}\n`);
  else options.onProgress = progress(io);
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
    if (report.unavailable !== null) printUnavailable(io, report);
    else io.out(`\n${formatTable(report)}\n`);
    const failures = report.results.filter((r) => r.status === "fail");
    if (failures.length > 0) io.out(`\n${formatFailures(failures, spec)}\n`);
    if (report.interruption !== undefined) io.out(`\n${formatInterruption(report.interruption, spec)}\n`);
    if (values.json !== undefined) {
      await writeFile(resolve(io.cwd, values.json), `${JSON.stringify(report, null, 2)}\n`);
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
