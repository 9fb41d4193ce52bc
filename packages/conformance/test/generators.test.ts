import {
  bf16ToNumber,
  blockPlacement,
  partialOf,
  referenceBackend,
  referenceCombine,
  slotsByRank,
} from "@switchyard/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { configSpace } from "../src/generators/space.js";
import { worldArb } from "../src/generators/world.js";
import { powerOfTwoWeights } from "../src/harness/cancelling.js";
import { makeInputs } from "../src/harness/inputs.js";
import { slotOrderOutputs } from "../src/harness/slotOrder.js";
import { quarterWeights, zeroSignOutputs } from "../src/harness/zeroSign.js";

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

/** The cases of the bit-exact combine properties reach what they are built for. */
describe("exact combine cases", () => {
  const found = configSpace(referenceBackend.capabilities, false);
  if ("reason" in found) throw new Error(found.reason);

  it("stacked routing puts 3 or more slots of a token on one rank, where a reversed order changes the partial", () => {
    let stacked = 0;
    let changed = 0;
    const arb = worldArb(found.space, { routing: ["stacked"], minSlotsPerRank: 3 });
    for (const { config: c, steps } of fc.sample(arb, { numRuns: 40, seed: 11 })) {
      expect(Math.min(c.topK, c.experts / c.ranks)).toBeGreaterThanOrEqual(3);
      const inputs = powerOfTwoWeights(makeInputs(c, steps[0]));
      const outputOf = slotOrderOutputs(c, inputs);
      const { rankOf } = blockPlacement(c);
      inputs.forEach((input, src) => {
        for (let t = 0; t < input.topkIdx.length / c.topK; t++) {
          const idx = input.topkIdx.subarray(t * c.topK, (t + 1) * c.topK);
          for (const [, slots] of slotsByRank(idx, rankOf)) {
            if (slots.length < 3) continue;
            stacked++;
            const terms = slots.map((k) => ({
              w: input.topkWeights[t * c.topK + k],
              o: outputOf(idx[k], src, t, k),
            }));
            const inOrder = partialOf(c.hidden, terms);
            const reversed = partialOf(c.hidden, terms.slice().reverse());
            if (inOrder.some((v, h) => v !== reversed[h])) changed++;
          }
        }
      });
    }
    expect(stacked).toBeGreaterThan(100);
    expect(changed).toBe(stacked);
  });

  it("zero-sign outputs give every partial -0, cancelling partials and -0 products, and y +0 throughout", () => {
    const seen = new Set<string>();
    const arb = worldArb(found.space, { routing: ["uniform", "hot", "stacked"] });
    for (const { config: c, steps } of fc.sample(arb, { numRuns: 40, seed: 11 })) {
      if (c.combineWeights === "home") continue; // combine/zero-sign draws expert configs only
      const inputs = quarterWeights(makeInputs(c, steps[0]));
      const outputOf = zeroSignOutputs(c, inputs);
      for (const y of referenceCombine(c, inputs, outputOf)) expect(y.every((v) => v === 0)).toBe(true);
      const { rankOf } = blockPlacement(c);
      inputs.forEach((input, src) => {
        for (let t = 0; t < input.topkIdx.length / c.topK; t++) {
          const idx = input.topkIdx.subarray(t * c.topK, (t + 1) * c.topK);
          const byRank = slotsByRank(idx, rankOf);
          const terms = byRank.map(([, slots]) =>
            slots.map((k) => ({ w: input.topkWeights[t * c.topK + k], o: outputOf(idx[k], src, t, k) })),
          );
          const partials = terms.map((ts) => partialOf(c.hidden, ts));
          for (let h = 0; h < c.hidden && partials.length > 0; h++) {
            if (partials.every((p) => p[h] === 0x8000))
              seen.add(`every partial -0 (${Math.min(partials.length, 3)} ranks)`);
            if (partials.some((p) => (p[h] & 0x7fff) !== 0)) seen.add("partials that cancel");
            const products = terms.flat().map(({ w, o }) => Math.fround(w * bf16ToNumber(o[h])));
            if (products.every((p) => Object.is(p, -0))) seen.add("every product -0");
          }
        }
      });
    }
    expect([...seen].sort()).toEqual([
      "every partial -0 (1 ranks)",
      "every partial -0 (2 ranks)",
      "every partial -0 (3 ranks)",
      "every product -0",
      "partials that cancel",
    ]);
  });
});
