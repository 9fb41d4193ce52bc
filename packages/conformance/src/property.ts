import type { Backend, Capabilities, SessionOptions } from "@switchyard/core";
import fc from "fast-check";
import { type ConfigSpace, configSpace, type SpaceWants } from "./generators/space.js";
import { errorMessage, errorName } from "./harness/problems.js";

/** What a property sees while it runs against one backend. */
export interface PropertyContext {
  readonly backend: Backend;
  readonly caps: Capabilities;
  /** Bigger configs and more steps (the deep suite). */
  readonly deep: boolean;
  readonly sessionOptions: SessionOptions;
}

/** How a property is written: a generator of cases within a config space, and a check of one case. */
export interface PropertySpec<C> {
  /** Stable hierarchical name, e.g. `dispatch/rows`. */
  name: string;
  /** Required properties run on every backend; the others only where their capability is declared. */
  required: boolean;
  /** One line: what the property checks. */
  summary: string;
  /** What the property needs of the config space; an empty space skips it with the reason. */
  wants?: SpaceWants;
  /** Further skip rule on the capabilities (null: runs). */
  gate?(caps: Capabilities): string | null;
  arbitrary(space: ConfigSpace, ctx: PropertyContext): fc.Arbitrary<C>;
  /** Runs one case; throws (a `ConformanceMismatch`, or the backend's own error) when it fails. */
  check(ctx: PropertyContext, value: C): Promise<void>;
  /** A short human summary of a case (config, tokens, routing) for the report. */
  describe(value: C): string;
}

/** fast-check parameters the runner passes to one property. */
export interface PropertyRunParams {
  numRuns: number;
  seed: number;
  path?: string;
  shrink: boolean;
  /** Fails a single run that takes longer than this. */
  runTimeoutMs: number;
  /**
   * Shrinking stops once this long has passed since the first failure (default
   * DEFAULT_SHRINK_TIME_MS), reporting the smallest failing case found so far: a backend that hangs
   * costs one run's limit per shrinking step, which must not add up without bound.
   */
  shrinkTimeMs?: number;
  /** Called before every run (for progress). */
  onRun?: () => void;
  /**
   * Called once per run as it ends, with the error of a failure: "skip" for a case filtered out
   * with `fc.pre`, "fail" also for a case fast-check abandoned after `runTimeoutMs` (reported when
   * the next run starts).
   */
  onRunEnd?: (outcome: "pass" | "fail" | "skip", error?: string) => void;
  /** Once aborted, no further case runs: fast-check stops and the outcome says `interrupted`. */
  signal?: AbortSignal;
}

/** What fast-check found. */
export interface PropertyOutcome {
  failed: boolean;
  /** Stopped by `params.signal` before the end: not a pass (a failure only if a case had failed). */
  interrupted: boolean;
  runs: number;
  shrinks: number;
  seed: number;
  path: string | null;
  counterexample: string | null;
  error: string | null;
}

/** A named property of the suite, independent of any backend. */
export interface ConformanceProperty {
  readonly name: string;
  readonly required: boolean;
  readonly summary: string;
  /** null when the property runs on a backend with these capabilities, else why it is skipped. */
  skipReason(caps: Capabilities, deep?: boolean): string | null;
  /** Runs the property against a backend with fast-check. */
  run(ctx: PropertyContext, params: PropertyRunParams): Promise<PropertyOutcome>;
}

/** The default of `shrinkTimeMs`: 30 s of shrinking at most after the first failure. */
export const DEFAULT_SHRINK_TIME_MS = 30_000;

/** The error's message; for a backend's own error (directly or as the cause of a mismatch), its top frames too. */
function describeError(e: unknown): string {
  const mismatch = errorName(e) === "ConformanceMismatch";
  const text = mismatch ? errorMessage(e) : `${errorName(e)}: ${errorMessage(e)}`;
  const origin = mismatch ? (e as { cause?: unknown }).cause : e;
  const frames = origin instanceof Error && origin.stack ? origin.stack.split("\n").slice(1, 4) : [];
  return frames.length > 0 ? `${text}\n${frames.map((f) => `  ${f.trim()}`).join("\n")}` : text;
}

/** Turns a spec into a runnable property. */
export function defineProperty<C>(spec: PropertySpec<C>): ConformanceProperty {
  const skipReason = (caps: Capabilities, deep = false): string | null => {
    const space = configSpace(caps, deep, spec.wants);
    if ("reason" in space) return space.reason;
    return spec.gate?.(caps) ?? null;
  };
  return {
    name: spec.name,
    required: spec.required,
    summary: spec.summary,
    skipReason,
    async run(ctx, params) {
      const space = configSpace(ctx.caps, ctx.deep, spec.wants);
      if ("reason" in space) throw new Error(`${spec.name}: cannot run: ${space.reason}`);
      let inFlight = 0; // the run whose check has not ended yet (0: none)
      let started = 0;
      let failedAt: number | null = null; // when the first failure was seen (shrinking since)
      const shrinkTimeMs = params.shrinkTimeMs ?? DEFAULT_SHRINK_TIME_MS;
      const property = fc.asyncProperty(spec.arbitrary(space.space, ctx), async (value) => {
        // Let timers and I/O (progress output, a test runner's RPC) through between runs.
        await new Promise((resolve) => setImmediate(resolve));
        // Interrupted: fast-check stops here, before another case.
        if (params.signal?.aborted) throw new fc.PreconditionFailure(true);
        // A check still running was abandoned by fc.timeout, which failed its run.
        if (inFlight !== 0) {
          failedAt ??= performance.now();
          params.onRunEnd?.("fail", `the case ran longer than ${params.runTimeoutMs} ms`);
        }
        // Shrinking past its budget: fast-check stops and reports the smallest failure so far.
        if (failedAt !== null && performance.now() - failedAt > shrinkTimeMs)
          throw new fc.PreconditionFailure(true);
        const id = ++started;
        inFlight = id;
        params.onRun?.();
        const end = (outcome: "pass" | "fail" | "skip", error?: string) => {
          if (inFlight !== id) return;
          inFlight = 0;
          params.onRunEnd?.(outcome, error);
        };
        try {
          await spec.check(ctx, value);
        } catch (e) {
          if (fc.PreconditionFailure.isFailure(e)) end("skip");
          else {
            failedAt ??= performance.now();
            end("fail", describeError(e));
          }
          throw e;
        }
        end("pass");
      });
      const details = await fc.check(property, {
        numRuns: params.numRuns,
        seed: params.seed,
        ...(params.path !== undefined ? { path: params.path } : {}),
        endOnFailure: !params.shrink,
        plugins: [fc.timeout(params.runTimeoutMs)],
      });
      const example = (details.counterexample as [C] | null)?.[0];
      return {
        // Interrupted while shrinking a failure: a failure (shrunk part of the way); before any: not.
        failed: details.failed && (details.counterexample !== null || !details.interrupted),
        interrupted: details.interrupted,
        runs: details.numRuns,
        shrinks: details.numShrinks,
        seed: details.seed,
        path: details.counterexamplePath,
        counterexample: example === undefined ? null : spec.describe(example),
        error: !details.failed
          ? null
          : details.errorInstance !== null && details.errorInstance !== undefined
            ? describeError(details.errorInstance)
            : (fc.defaultReportMessage(details) ?? "failed"),
      };
    },
  };
}
