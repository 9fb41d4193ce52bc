import { type Backend, DEFAULT_TIMEOUT_MS } from "@switchyard/core";
import { validateCapabilities } from "./capabilities.js";
import { errorMessage, errorName } from "./harness/problems.js";
import { PROPERTIES } from "./properties/index.js";
import type { ConformanceProperty, PropertyContext } from "./property.js";
import { selectProperties } from "./select.js";
import type {
  ConformanceOptions,
  ConformanceReport,
  InterruptedProperty,
  Interruption,
  PropertyResult,
} from "./types.js";

export const QUICK_RUNS = 15;

/** The version of the report's JSON form (`schemas/conformance-report.schema.json`); raised when a field changes meaning or goes. */
export const REPORT_VERSION = 1;
export const DEEP_RUNS = 150;

/** The flags that replay a failure with the command line (`switchyard conformance ...`). */
export function replayFlags(
  name: string,
  seed: number,
  path: string | null | undefined,
  deep: boolean,
): string {
  return `--only ${name} --seed ${seed}${path ? ` --path ${path}` : ""}${deep ? " --deep" : ""}`;
}

function randomSeed(): number {
  return (Math.random() * 0x7fffffff) | 0;
}

async function unavailability(backend: Backend): Promise<string | null> {
  try {
    return await backend.unavailableReason();
  } catch (e) {
    return `unavailableReason() threw ${errorName(e)}: ${errorMessage(e)}`;
  }
}

/** What the runner knows of the property running now (for an interruption's report). */
interface Live {
  /** Runs started. */
  run: number;
  /** Runs passed before the first failure. */
  passed: number;
  /** The run that failed first (null: none yet), and its error. */
  failedRun: number | null;
  error?: string;
}

const INTERRUPTED = Symbol("interrupted");

/** `promise`, or INTERRUPTED as soon as `signal` aborts (the promise is then left to itself). */
async function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T | typeof INTERRUPTED> {
  if (signal === undefined) return promise;
  if (signal.aborted) return INTERRUPTED;
  let listener = () => {};
  const aborted = new Promise<typeof INTERRUPTED>((resolve) => {
    listener = () => resolve(INTERRUPTED);
    signal.addEventListener("abort", listener, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener("abort", listener);
  }
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return typeof r === "string" ? r : `${errorName(r)}: ${errorMessage(r)}`;
}

/**
 * Runs the conformance suite against `backend`: every property (or those `options.only`
 * selects), each with fast-check for `numRuns` cases. Never throws for a failing backend: the
 * report says what failed and how to replay it (`seed`, `path`). When `options.signal` aborts it
 * resolves at once, `interrupted`, with the properties finished so far. Throws
 * `CapabilitiesError` (before running anything) when the backend's capabilities are malformed.
 */
export async function runConformance(
  backend: Backend,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const caps = validateCapabilities(String(backend.name), backend.capabilities);
  const selected = selectProperties(PROPERTIES, options.only);
  if (options.path !== undefined && selected.length !== 1) {
    throw new TypeError(
      `runConformance: options.path replays one property, but ${selected.length} are selected; ` +
        "set options.only to the failing property's name",
    );
  }
  const deep = options.deep ?? false;
  const numRuns = options.numRuns ?? (deep ? DEEP_RUNS : QUICK_RUNS);
  const seed = options.seed ?? randomSeed();
  const started = performance.now();
  const signal = options.signal;
  // On an interruption nothing in flight is awaited (a case may take minutes, or never end).
  const probed = await untilAborted(unavailability(backend), signal);
  const unavailable = probed === INTERRUPTED ? null : probed;
  const ctx: PropertyContext = {
    backend,
    caps,
    deep,
    sessionOptions: { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
  };
  const results: PropertyResult[] = [];
  let running: InterruptedProperty | null = null;
  for (let index = 0; index < selected.length && probed !== INTERRUPTED && !signal?.aborted; index++) {
    const property = selected[index];
    options.onProgress?.({ kind: "start", name: property.name, index, total: selected.length });
    const live: Live = { run: 0, passed: 0, failedRun: null };
    const t0 = performance.now();
    const params = { ...options, numRuns, seed, deep };
    const result = await untilAborted(runOne(property, ctx, unavailable, params, live), signal);
    if (result === INTERRUPTED) {
      running = interrupted(property, live, params, performance.now() - t0);
      break;
    }
    results.push(result);
    options.onProgress?.({ kind: "done", result, index, total: selected.length });
  }
  const finished = new Set(results.map((r) => r.name));
  const notRun = selected.map((p) => p.name).filter((n) => !finished.has(n) && n !== running?.name);
  const interruption: Interruption | undefined =
    signal?.aborted && (running !== null || notRun.length > 0)
      ? { reason: abortReason(signal), property: running, notRun }
      : undefined;
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const r of results) counts[r.status]++;
  return {
    version: REPORT_VERSION,
    backend: backend.name,
    ok: counts.fail === 0 && interruption === undefined,
    interrupted: interruption !== undefined,
    ...(interruption !== undefined ? { interruption } : {}),
    unavailable,
    seed,
    numRuns,
    deep,
    durationMs: performance.now() - started,
    counts,
    results,
  };
}

function interrupted(
  property: ConformanceProperty,
  live: Live,
  options: { numRuns: number; seed: number; deep: boolean },
  durationMs: number,
): InterruptedProperty {
  return {
    name: property.name,
    required: property.required,
    summary: property.summary,
    status: "interrupted",
    seed: options.seed,
    numRuns: options.numRuns,
    runs: live.run,
    passed: live.passed,
    ...(live.failedRun !== null
      ? {
          failedRun: live.failedRun,
          ...(live.error !== undefined ? { error: live.error } : {}),
          replay: replayFlags(property.name, options.seed, null, options.deep),
        }
      : {}),
    durationMs,
  };
}

async function runOne(
  property: ConformanceProperty,
  ctx: PropertyContext,
  unavailable: string | null,
  options: ConformanceOptions & { numRuns: number; seed: number; deep: boolean },
  live: Live,
): Promise<PropertyResult | typeof INTERRUPTED> {
  const head = { name: property.name, required: property.required, summary: property.summary };
  const skip =
    unavailable !== null ? `backend unavailable: ${unavailable}` : property.skipReason(ctx.caps, ctx.deep);
  if (skip !== null) return { ...head, status: "skip", reason: skip, runs: 0, durationMs: 0 };
  const t0 = performance.now();
  try {
    const outcome = await property.run(ctx, {
      numRuns: options.numRuns,
      seed: options.seed,
      ...(options.path !== undefined ? { path: options.path } : {}),
      shrink: options.shrink ?? true,
      runTimeoutMs: options.runTimeoutMs ?? 120_000,
      ...(options.shrinkTimeMs !== undefined ? { shrinkTimeMs: options.shrinkTimeMs } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      onRun: () =>
        options.onProgress?.({
          kind: "run",
          name: property.name,
          run: ++live.run,
          numRuns: options.numRuns,
          failed: live.failedRun !== null,
        }),
      onRunEnd: (end, error) => {
        if (live.failedRun !== null) return;
        if (end === "pass") live.passed++;
        else if (end === "fail") {
          live.failedRun = live.run;
          if (error !== undefined) live.error = error;
        }
      },
    });
    const durationMs = performance.now() - t0;
    if (outcome.interrupted && !outcome.failed) return INTERRUPTED;
    if (!outcome.failed)
      return { ...head, status: "pass", seed: outcome.seed, runs: outcome.runs, durationMs };
    return {
      ...head,
      status: "fail",
      seed: outcome.seed,
      ...(outcome.path !== null ? { path: outcome.path } : {}),
      ...(outcome.counterexample !== null ? { counterexample: outcome.counterexample } : {}),
      error: outcome.error ?? "failed",
      replay: replayFlags(property.name, outcome.seed, outcome.path, options.deep),
      runs: outcome.runs,
      shrinks: outcome.shrinks,
      durationMs,
    };
  } catch (e) {
    return {
      ...head,
      status: "fail",
      seed: options.seed,
      error: `the suite could not run the property: ${errorName(e)}: ${errorMessage(e)}`,
      replay: replayFlags(property.name, options.seed, null, options.deep),
      runs: live.run,
      durationMs: performance.now() - t0,
    };
  }
}
