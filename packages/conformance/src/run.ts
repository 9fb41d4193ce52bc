import { type Backend, DEFAULT_TIMEOUT_MS } from "@switchyard/core";
import { errorMessage, errorName } from "./harness/problems.js";
import { PROPERTIES } from "./properties/index.js";
import type { ConformanceProperty, PropertyContext } from "./property.js";
import { selectProperties } from "./select.js";
import type { ConformanceOptions, ConformanceReport, PropertyResult } from "./types.js";

export const QUICK_RUNS = 15;
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

/**
 * Runs the conformance suite against `backend`: every property (or those `options.only`
 * selects), each with fast-check for `numRuns` cases. Never throws for a failing backend: the
 * report says what failed and how to replay it (`seed`, `path`).
 */
export async function runConformance(
  backend: Backend,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
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
  const unavailable = await unavailability(backend);
  const ctx: PropertyContext = {
    backend,
    caps: backend.capabilities,
    deep,
    sessionOptions: { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
  };
  const results: PropertyResult[] = [];
  for (let index = 0; index < selected.length; index++) {
    const property = selected[index];
    options.onProgress?.({ kind: "start", name: property.name, index, total: selected.length });
    const result = await runOne(property, ctx, unavailable, { ...options, numRuns, seed, deep });
    results.push(result);
    options.onProgress?.({ kind: "done", result, index, total: selected.length });
  }
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const r of results) counts[r.status]++;
  return {
    backend: backend.name,
    ok: counts.fail === 0,
    unavailable,
    seed,
    numRuns,
    deep,
    durationMs: performance.now() - started,
    counts,
    results,
  };
}

async function runOne(
  property: ConformanceProperty,
  ctx: PropertyContext,
  unavailable: string | null,
  options: ConformanceOptions & { numRuns: number; seed: number; deep: boolean },
): Promise<PropertyResult> {
  const head = { name: property.name, required: property.required, summary: property.summary };
  const skip =
    unavailable !== null ? `backend unavailable: ${unavailable}` : property.skipReason(ctx.caps, ctx.deep);
  if (skip !== null) return { ...head, status: "skip", reason: skip, runs: 0, durationMs: 0 };
  const t0 = performance.now();
  let run = 0;
  try {
    const outcome = await property.run(ctx, {
      numRuns: options.numRuns,
      seed: options.seed,
      ...(options.path !== undefined ? { path: options.path } : {}),
      shrink: options.shrink ?? true,
      runTimeoutMs: options.runTimeoutMs ?? 120_000,
      onRun: () =>
        options.onProgress?.({ kind: "run", name: property.name, run: ++run, numRuns: options.numRuns }),
    });
    const durationMs = performance.now() - t0;
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
      runs: run,
      durationMs: performance.now() - t0,
    };
  }
}
