import { referenceBackend } from "@switchyard/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { configSpace } from "../src/generators/space.js";
import { worldArb } from "../src/generators/world.js";
import { makeInputs } from "../src/harness/inputs.js";

/** Over a few hundred generated cases, every corner the suite promises to reach shows up. */
describe("generator reach", () => {
  for (const deep of [false, true]) {
    it(`${deep ? "deep" : "quick"} cases reach every corner`, () => {
      const found = configSpace(referenceBackend.capabilities, deep);
      if ("reason" in found) throw new Error(found.reason);
      const seen = new Set<string>();
      for (const { config: c, steps } of fc.sample(worldArb(found.space), { numRuns: 300, seed: 11 })) {
        seen.add(`ranks ${c.ranks}`);
        if (c.dpSize > 1) seen.add("DP groups");
        seen.add(c.layout);
        seen.add(`${c.inputDtype}->${c.dispatchDtype}`);
        seen.add(c.hidden % 128 === 0 ? "hidden multiple of 128" : "hidden not a multiple of 128");
        if (c.topK === c.experts && c.experts > 1) seen.add("K = experts");
        seen.add(c.expertAlignment > 1 ? "expertAlignment > 1" : "expertAlignment 1");
        const inputs = makeInputs(c, steps[0]);
        for (const g of steps[0].groups) {
          seen.add(g.routing.style);
          if (g.tokens === 0) seen.add("0 tokens");
          if (g.tokens === c.maxTokensPerRank) seen.add("maxTokensPerRank tokens");
        }
        for (const input of inputs) {
          for (let t = 0; t < input.topkIdx.length / c.topK; t++) {
            const row = Array.from(input.topkIdx.subarray(t * c.topK, (t + 1) * c.topK));
            if (row.some((e) => e < 0)) seen.add("-1 slot");
            if (row.every((e) => e < 0)) seen.add("token with every slot -1");
          }
        }
      }
      const expected = [
        ...Array.from({ length: 8 }, (_, i) => `ranks ${i + 1}`),
        "DP groups",
        "masked",
        "contiguous",
        "bf16->bf16",
        "bf16->fp8-e4m3",
        "fp8-e4m3->fp8-e4m3",
        "hidden multiple of 128",
        "hidden not a multiple of 128",
        "K = experts",
        "expertAlignment 1",
        "expertAlignment > 1",
        "uniform",
        "hot",
        "zipf",
        "single",
        "0 tokens",
        "maxTokensPerRank tokens",
        "-1 slot",
        "token with every slot -1",
      ];
      expect(expected.filter((e) => !seen.has(e))).toEqual([]);
    });
  }
});
