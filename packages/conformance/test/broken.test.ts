import { describe, expect, it } from "vitest";
import { runConformance } from "../src/index.js";
import { BROKEN } from "./broken/index.js";

/** Fixed so CI is reproducible; every case also fails for random seeds (see the README). */
const SEED = 20240611;

describe("the suite catches deliberately broken backends", () => {
  for (const { backend, targets, options, maxMs } of BROKEN) {
    it(`${backend.name} fails ${targets.join(", ")}`, async () => {
      const report = await runConformance(backend, { only: targets, seed: SEED, numRuns: 20, ...options });
      for (const name of targets) {
        const r = report.results.find((x) => x.name === name);
        expect(r?.status, `${name} against ${backend.name}: ${r?.error}`).toBe("fail");
        expect(r?.seed).toBe(SEED);
        expect(r?.path).toMatch(/^\d+(:\d+)*$/);
        expect(r?.replay).toContain(`--seed ${SEED} --path ${r?.path}`);
        if (maxMs !== undefined) expect(r?.durationMs, `${name} took too long to shrink`).toBeLessThan(maxMs);
      }
    });
  }

  it("replays a failure from its seed and path alone", async () => {
    const { backend, targets } = BROKEN[0];
    const first = await runConformance(backend, { only: targets[0], seed: SEED, numRuns: 20 });
    const failure = first.results[0];
    expect(failure.status).toBe("fail");
    const replay = await runConformance(backend, {
      only: targets[0],
      seed: failure.seed,
      path: failure.path,
      shrink: false,
    });
    expect(replay.results[0].status).toBe("fail");
    expect(replay.results[0].runs).toBe(1);
    expect(replay.results[0].counterexample).toBe(failure.counterexample);
  });
});
