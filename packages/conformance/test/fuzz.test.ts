import { referenceBackend } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { formatFuzzReport, fuzzBackend, fuzzCoreApi } from "../src/index.js";
import { describeFuzz } from "../src/vitest.js";
import { scribbler } from "./broken/scribble.js";
import { lateRefusal, laxPhases, lenientIndices } from "./broken/session.js";

const SEED = 20260611;

describe("fuzz/core-api: defineConfig and validateRankInput", () => {
  it("accept exactly what the documented rules allow and refuse the rest with named errors", async () => {
    const report = await fuzzCoreApi({ numRuns: 200 });
    console.log(formatFuzzReport(report));
    expect(report.failed, formatFuzzReport(report)).toBe(false);
    expect(report.counts.badRefused).toBe(report.counts.badTried);
    expect(report.counts.byError.ConfigError).toBeGreaterThan(1000);
    expect(report.counts.byError.InputError).toBeGreaterThan(1000);
    expect(report.counts.validCalls).toBeGreaterThan(500);
  });
});

// core's reference backend under the session fuzzer (webgpu-ref runs the same in its own tests).
describeFuzz(referenceBackend, { numRuns: 60, maxOps: 60 });

describe("the session fuzzer catches broken backends", () => {
  for (const backend of [lateRefusal, laxPhases, lenientIndices, scribbler]) {
    it(backend.name, async () => {
      const report = await fuzzBackend(backend, { seed: SEED, numRuns: 60, shrink: false });
      expect(report.failed, formatFuzzReport(report)).toBe(true);
      expect(report.replay).toContain(`seed: ${SEED}`);
    });
  }

  it("replays a failure from its seed and path alone", async () => {
    const first = await fuzzBackend(laxPhases, { seed: SEED, numRuns: 60 });
    expect(first.failed).toBe(true);
    const again = await fuzzBackend(laxPhases, { seed: first.seed, path: first.path!, shrink: false });
    expect(again.failed).toBe(true);
    expect(again.runs).toBe(1);
    expect(again.counterexample).toBe(first.counterexample);
  });
});
