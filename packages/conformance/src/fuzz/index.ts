import { type Backend, type Capabilities, DEFAULT_TIMEOUT_MS, referenceBackend } from "@switchyard/core";
import { validateCapabilities } from "../capabilities.js";
import type { PropertyContext } from "../property.js";
import { coreApiFuzz } from "./coreApi.js";
import { emptyCounts, type FuzzCounts, formatCounts } from "./counts.js";
import { sessionFuzz } from "./sessionFuzz.js";

export { configProblems, withDefaults } from "./configOracle.js";
export { type FuzzCounts, formatCounts } from "./counts.js";
export { inputProblems } from "./inputOracle.js";
export { mutateConfig } from "./mutateConfig.js";
export { mutateInput } from "./mutateInput.js";
export type { FuzzOp } from "./sessionOps.js";

export interface FuzzOptions {
  /** fast-check runs (default 40 for the session fuzzer, 60 for the core API). */
  numRuns?: number;
  /** Seed (random when absent; the report says which). */
  seed?: number;
  /** Replay path of a failure (with the same seed). */
  path?: string;
  /** Shrink a failure (default true). */
  shrink?: boolean;
  /** Most ops in one session run (default 40). */
  maxOps?: number;
  /** Cuts the generated configs below the backend's capabilities, to keep runs fast. */
  maxRanks?: number;
  maxHidden?: number;
  /** The sessions' SessionOptions.timeoutMs. */
  timeoutMs?: number;
}

/** The outcome of a fuzz run: pass / fail, the replay seed and path, and what was tried. */
export interface FuzzReport {
  name: string;
  backend: string;
  failed: boolean;
  seed: number;
  path: string | null;
  runs: number;
  counterexample: string | null;
  error: string | null;
  counts: FuzzCounts;
  /** The options that replay the failure (or the run). */
  replay: string;
}

function narrowed(caps: Capabilities, o: FuzzOptions): Capabilities {
  return {
    ...caps,
    maxRanks: Math.min(caps.maxRanks, o.maxRanks ?? caps.maxRanks),
    maxHidden: Math.min(caps.maxHidden, o.maxHidden ?? caps.maxHidden),
    // The session fuzzer's inputs carry their weights to dispatch: it drives combineWeights expert only.
    combineWeights: ["expert"],
  };
}

async function run(
  backend: Backend,
  property: ReturnType<typeof sessionFuzz>,
  counts: FuzzCounts,
  options: FuzzOptions,
  numRuns: number,
): Promise<FuzzReport> {
  const ctx: PropertyContext = {
    backend,
    caps: narrowed(validateCapabilities(String(backend.name), backend.capabilities), options),
    deep: false,
    sessionOptions: { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
  };
  const seed = options.seed ?? (Math.random() * 0x7fffffff) | 0;
  const outcome = await property.run(ctx, {
    numRuns: options.numRuns ?? numRuns,
    seed,
    ...(options.path !== undefined ? { path: options.path } : {}),
    shrink: options.shrink ?? true,
    runTimeoutMs: 120_000,
  });
  const path = outcome.path;
  return {
    name: property.name,
    backend: backend.name,
    failed: outcome.failed,
    seed: outcome.seed,
    path,
    runs: outcome.runs,
    counterexample: outcome.counterexample,
    error: outcome.error,
    counts,
    replay: `{ seed: ${outcome.seed}${path ? `, path: "${path}"` : ""} }`,
  };
}

/**
 * Fuzzes a backend's sessions (`fuzz/session`, see sessionFuzz.ts): random valid and invalid call
 * sequences checked against a model and core's reference. Never throws for a failing backend: the
 * report says what failed and the `{ seed, path }` that replays it.
 */
export async function fuzzBackend(backend: Backend, options: FuzzOptions = {}): Promise<FuzzReport> {
  const counts = emptyCounts();
  return run(backend, sessionFuzz(counts, options.maxOps ?? 40), counts, options, 40);
}

/** Fuzzes core's `defineConfig` and `validateRankInput` (`fuzz/core-api`, see coreApi.ts). */
export async function fuzzCoreApi(options: FuzzOptions = {}): Promise<FuzzReport> {
  const counts = emptyCounts();
  return run(referenceBackend, coreApiFuzz(counts), counts, options, 60);
}

/** A report in a few lines: the figures, and on failure the error and how to replay it. */
export function formatFuzzReport(r: FuzzReport): string {
  const head = `${r.name} on ${r.backend}: ${r.failed ? "FAIL" : "pass"} after ${r.runs} run(s), seed ${r.seed}`;
  const lines = [head, `  ${formatCounts(r.counts)}`];
  if (r.failed) {
    if (r.counterexample) lines.push(`  case: ${r.counterexample}`);
    lines.push(`  ${r.error ?? "failed"}`.replace(/\n/g, "\n  "));
    lines.push(`  replay with options ${r.replay}`);
  }
  return lines.join("\n");
}
