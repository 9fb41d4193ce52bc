import { seededRandom } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { expectedDistinctGroups, hitProbability, missProbability } from "../../src/model/routing.js";

/** Mean distinct groups a token reaches over `tokens` random top-K routings (K distinct experts). */
function monteCarlo(experts: number, groups: number, topK: number, tokens: number, seed: number): number {
  const rand = seededRandom(seed);
  const per = experts / groups;
  const chosen = new Set<number>();
  const hit = new Set<number>();
  let sum = 0;
  for (let t = 0; t < tokens; t++) {
    chosen.clear();
    hit.clear();
    while (chosen.size < topK) {
      const e = Math.floor(rand() * experts);
      if (chosen.has(e)) continue;
      chosen.add(e);
      hit.add(Math.floor(e / per));
    }
    sum += hit.size;
  }
  return sum / tokens;
}

describe("expected distinct ranks and hosts of a token", () => {
  it("is exact on a case small enough to count by hand", () => {
    // 4 experts in 2 groups, top-2: 6 pairs, 2 of them inside one group
    expect(missProbability(4, 2, 2)).toBeCloseTo(1 / 6, 12);
    expect(expectedDistinctGroups(4, 2, 2)).toBeCloseTo((2 * 4 + 1 * 2) / 6, 12);
  });

  it("matches a seeded Monte-Carlo over random top-8 routings of 256 experts", () => {
    for (const groups of [1, 2, 4, 8, 16, 32, 64, 256]) {
      const closed = expectedDistinctGroups(256, groups, 8);
      const sampled = monteCarlo(256, groups, 8, 20_000, 1234 + groups);
      // the count's standard deviation is below 1.2, so 20,000 tokens give a mean within ~0.035 at 4 sigma
      expect(Math.abs(closed - sampled)).toBeLessThan(0.035);
    }
  });

  it("has the limits it must have", () => {
    expect(expectedDistinctGroups(256, 1, 8)).toBe(1);
    expect(expectedDistinctGroups(256, 256, 8)).toBeCloseTo(8, 12);
    expect(hitProbability(256, 256, 8)).toBe(1);
    expect(hitProbability(256, 0, 8)).toBe(0);
    // protocol.md's figure: top-8 over 256 experts on 4 ranks reaches 3.6 ranks
    expect(expectedDistinctGroups(256, 4, 8)).toBeCloseTo(3.6, 1);
  });

  it("grows with the number of groups and with top-K, never past either", () => {
    let last = 0;
    for (const groups of [1, 2, 4, 8, 16, 32, 64, 128, 256]) {
      const d = expectedDistinctGroups(256, groups, 8);
      expect(d).toBeGreaterThan(last);
      expect(d).toBeLessThanOrEqual(Math.min(groups, 8));
      last = d;
    }
    for (let k = 1; k < 8; k++) {
      expect(expectedDistinctGroups(256, 16, k + 1)).toBeGreaterThan(expectedDistinctGroups(256, 16, k));
    }
  });

  it("refuses worlds that do not split the experts", () => {
    expect(() => expectedDistinctGroups(256, 3, 8)).toThrow(RangeError);
    expect(() => missProbability(256, 8, 300)).toThrow(RangeError);
  });
});
