import { type Backend, type Capabilities, DEFAULT_TIMEOUT_MS } from "@switchyard/core";
import { describe, it } from "vitest";
import { validateCapabilities } from "./capabilities.js";
import { formatFailure } from "./format.js";
import { type FuzzOptions, formatFuzzReport, fuzzBackend } from "./fuzz/index.js";
import { PROPERTIES } from "./properties/index.js";
import type { PropertyContext } from "./property.js";
import { DEEP_RUNS, QUICK_RUNS, replayFlags } from "./run.js";
import { selectProperties } from "./select.js";
import type { ConformanceOptions } from "./types.js";

export interface VitestConformanceOptions extends Omit<ConformanceOptions, "onProgress"> {
  /** vitest timeout of each property's test (default 5 minutes; 30 with `deep`). */
  testTimeoutMs?: number;
}

function envSeed(): number | undefined {
  const s = process.env.SWITCHYARD_SEED;
  return s === undefined || s === "" ? undefined : Number(s);
}

/**
 * Registers the conformance suite as vitest tests: one `it` per property, named after it, so the
 * runner's summary counts them. Properties the backend's capabilities rule out are `it.skip`
 * with the reason in the title; if `unavailableReason()` is non-null every test skips with it.
 * A failure's message carries the seed and path that replay it. Malformed capabilities register
 * one failing test, `capabilities`, whose error names the bad fields. SWITCHYARD_SEED and
 * SWITCHYARD_DEEP=1 in the environment set `seed` and `deep` when the options do not.
 *
 * ```ts
 * // test/conformance.test.ts of a backend package
 * describeConformance(myBackend);
 * ```
 */
export function describeConformance(backend: Backend, options: VitestConformanceOptions = {}): void {
  const deep = options.deep ?? process.env.SWITCHYARD_DEEP === "1";
  const numRuns = options.numRuns ?? (deep ? DEEP_RUNS : QUICK_RUNS);
  const seed = options.seed ?? envSeed() ?? (Math.random() * 0x7fffffff) | 0;
  const timeout = options.testTimeoutMs ?? (deep ? 30 : 5) * 60_000;
  let caps: Capabilities;
  try {
    caps = validateCapabilities(String(backend.name), backend.capabilities);
  } catch (e) {
    describe(`conformance: ${backend.name}`, () => {
      it("capabilities", () => {
        throw e;
      });
    });
    return;
  }
  const ctx: PropertyContext = {
    backend,
    caps,
    deep,
    sessionOptions: { timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
  };
  let unavailable: Promise<string | null> | null = null;
  describe(`conformance: ${backend.name} (seed ${seed}${deep ? ", deep" : ""})`, () => {
    for (const property of selectProperties(PROPERTIES, options.only)) {
      const tag = property.required ? "" : " [gated]";
      const reason = property.skipReason(caps, deep);
      if (reason !== null) {
        it.skip(`${property.name}${tag} (skipped: ${reason})`, () => {});
        continue;
      }
      it(
        `${property.name}${tag}`,
        async (test) => {
          unavailable ??= Promise.resolve().then(() => backend.unavailableReason());
          const why = await unavailable;
          if (why !== null) test.skip(`backend unavailable: ${why}`);
          const outcome = await property.run(ctx, {
            numRuns,
            seed,
            ...(options.path !== undefined ? { path: options.path } : {}),
            shrink: options.shrink ?? true,
            runTimeoutMs: options.runTimeoutMs ?? 120_000,
            ...(options.shrinkTimeMs !== undefined ? { shrinkTimeMs: options.shrinkTimeMs } : {}),
          });
          if (outcome.failed) {
            throw new Error(
              formatFailure({
                name: property.name,
                required: property.required,
                summary: property.summary,
                status: "fail",
                seed: outcome.seed,
                ...(outcome.path !== null ? { path: outcome.path } : {}),
                ...(outcome.counterexample !== null ? { counterexample: outcome.counterexample } : {}),
                error: outcome.error ?? "failed",
                replay: replayFlags(property.name, outcome.seed, outcome.path, deep),
                runs: outcome.runs,
                shrinks: outcome.shrinks,
                durationMs: 0,
              }),
            );
          }
        },
        timeout,
      );
    }
  });
}

export interface VitestFuzzOptions extends FuzzOptions {
  /** vitest timeout of the fuzz test (default 5 minutes). */
  testTimeoutMs?: number;
}

/**
 * Registers the session fuzzer (`fuzzBackend`) as one vitest test that prints its figures once
 * (bad inputs tried and refused, by error; valid calls; steps verified) and fails with the seed
 * and path that replay a failure. It also fails if the run tried no bad call or verified no step.
 * SWITCHYARD_SEED in the environment sets the seed when the options do not.
 *
 * ```ts
 * // test/fuzz.test.ts of a backend package
 * describeFuzz(myBackend, { numRuns: 30 });
 * ```
 */
export function describeFuzz(backend: Backend, options: VitestFuzzOptions = {}): void {
  const seed = options.seed ?? envSeed() ?? (Math.random() * 0x7fffffff) | 0;
  describe(`fuzz: ${backend.name} (seed ${seed})`, () => {
    it(
      "fuzz/session",
      async (test) => {
        const why = await backend.unavailableReason();
        if (why !== null) test.skip(`backend unavailable: ${why}`);
        const report = await fuzzBackend(backend, { ...options, seed });
        console.log(formatFuzzReport(report));
        if (report.failed) throw new Error(formatFuzzReport(report));
        const c = report.counts;
        if (c.badTried === 0 || c.stepsVerified === 0 || c.badRefused !== c.badTried)
          throw new Error(`the fuzzer did too little to prove anything: ${formatFuzzReport(report)}`);
      },
      options.testTimeoutMs ?? 5 * 60_000,
    );
  });
}
