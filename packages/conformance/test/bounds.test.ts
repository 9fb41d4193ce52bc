import { describe, expect, it } from "vitest";
import { runConformance } from "../src/index.js";
import { bf16Accumulate, fused, pairwise, reverseOrder, wide } from "./broken/recombine.js";

const SEED = 7;
const COMBINE = ["combine/accuracy", "roundtrip/identity", "roundtrip/fp8", "dp/group-output"];

describe("the combine bound admits every fp32-or-better accumulation", () => {
  for (const backend of [reverseOrder, pairwise, fused, wide]) {
    it(`${backend.name} passes`, async () => {
      const report = await runConformance(backend, { only: COMBINE, seed: SEED, numRuns: 30 });
      for (const r of report.results) expect(r.status, `${r.name}: ${r.error}`).toBe("pass");
    });
  }
});

describe("the combine bound refuses lower precision", () => {
  it("bf16 accumulation fails combine/accuracy", async () => {
    const report = await runConformance(bf16Accumulate, {
      only: "combine/accuracy",
      seed: SEED,
      numRuns: 30,
    });
    expect(report.results[0].status).toBe("fail");
  });
});
