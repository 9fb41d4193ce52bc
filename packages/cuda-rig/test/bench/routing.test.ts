import { defineConfig, localExperts, referenceDispatch } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import {
  benchRouting,
  countsMismatch,
  dispatchRowBytes,
  expectedCounts,
  meanRemoteBytes,
  remoteTraffic,
} from "../../src/bench/routing.js";

const config = defineConfig({
  ranks: 4,
  experts: 32,
  topK: 8,
  hidden: 256,
  maxTokensPerRank: 50,
  dispatchDtype: "fp8-e4m3",
});

describe("bench routing and byte counts", () => {
  it("K distinct experts per token, every slot used, weights in (0, 1], the same for the same seed", () => {
    const a = benchRouting(config, 3, 1, 2);
    expect(a.topkIdx.length).toBe(50 * 8);
    for (let t = 0; t < 50; t++) {
      const row = Array.from(a.topkIdx.subarray(t * 8, t * 8 + 8));
      expect(new Set(row).size).toBe(8);
      for (const e of row) expect(e >= 0 && e < 32).toBe(true);
    }
    for (const w of a.topkWeights) expect(w > 0 && w <= 1).toBe(true);
    expect(benchRouting(config, 3, 1, 2)).toEqual(a);
    expect(benchRouting(config, 3, 2, 2).topkIdx).not.toEqual(a.topkIdx);
    expect(benchRouting(config, 3, 1, 1).topkIdx).not.toEqual(a.topkIdx);
  });

  it("counts and remote rows agree with core's reference dispatch", () => {
    const routings = Array.from({ length: 4 }, (_, r) => benchRouting(config, 9, 0, r));
    const inputs = routings.map((r) => ({
      x: new Uint16Array(50 * 256),
      topkIdx: r.topkIdx,
      topkWeights: r.topkWeights,
    }));
    const ref = referenceDispatch(config, inputs);
    const L = localExperts(config);
    let totalRemote = 0;
    for (let rank = 0; rank < 4; rank++) {
      const counts = expectedCounts(config, routings, rank);
      for (let e = 0; e < L; e++) {
        for (let s = 0; s < 4; s++) {
          expect(counts[e * 4 + s]).toBe(ref[rank][e].filter((row) => row.srcRank === s).length);
        }
      }
      const t = remoteTraffic(config, routings, rank);
      // Partials back to other homes: one per (source, token) that reaches this rank.
      const tokens = new Set(
        ref[rank]
          .flat()
          .filter((row) => row.srcRank !== rank)
          .map((row) => `${row.srcRank}:${row.srcToken}`),
      );
      expect(t.combineRows).toBe(tokens.size);
      expect(t.combineBytes).toBe(tokens.size * 256 * 2);
      const J = Math.min(config.topK, L);
      expect(t.dispatchBytes).toBe(t.dispatchRows * (256 + 2 * 4 + 4 * (2 + 4 * J)));
      totalRemote += t.dispatchRows;
    }
    // What leaves the ranks in dispatch comes back in combine.
    const back = [0, 1, 2, 3].reduce((a, r) => a + remoteTraffic(config, routings, r).combineRows, 0);
    expect(back).toBe(totalRemote);
    const J = Math.min(config.topK, localExperts(config));
    expect(dispatchRowBytes({ ...config, dispatchDtype: "bf16" })).toBe(256 * 2 + 4 * (2 + 4 * J));
  });

  it("averages bytes over the rotated sets and names the first count that disagrees", () => {
    const sets = [0, 1, 2].map((set) => Array.from({ length: 4 }, (_, r) => benchRouting(config, 5, set, r)));
    const mean = meanRemoteBytes(config, sets, 1);
    const each = sets.map((routings) => remoteTraffic(config, routings, 1));
    expect(mean.dispatchBytes).toBeCloseTo(each.reduce((a, t) => a + t.dispatchBytes, 0) / 3, 9);
    expect(mean.combineBytes).toBeCloseTo(each.reduce((a, t) => a + t.combineBytes, 0) / 3, 9);
    const want = expectedCounts(config, sets[0], 2);
    expect(countsMismatch("counts", config, sets[0], 2, want)).toBeNull();
    const got = Int32Array.from(want);
    got[5] += 1;
    expect(countsMismatch("counts", config, sets[0], 2, got)).toBe(
      `rank 2: counts[5] = ${got[5]}, the routing gives ${want[5]}`,
    );
  });
});
