import { defineConfig, type EpConfig, rowBytes } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { createPair, homeSplit, randomExpertOut, randomInputs, rng, schedule } from "./helpers.js";

/**
 * Session.stats against core's reference after every call of a random interleaving: records per
 * destination and source (dispatch), partials per home and expert rank (combine), bytes by core's
 * rowBytes (a record: payload, scales and W route words; a partial, or with combineWeights home a
 * (token, slot) row: 2 H bytes).
 */
async function compareStats(config: EpConfig, seed: number, steps: number): Promise<void> {
  const rand = rng(seed);
  const { gpu, ref } = await createPair(config);
  try {
    const inputs = Array.from({ length: steps }, () =>
      randomInputs(config, rand).map((input) => homeSplit(config, input, rand)),
    );
    for (let r = 0; r < config.ranks; r++) expect(await gpu.stats(r)).toEqual(await ref.stats(r));
    for (const a of schedule(config.ranks, steps, rand)) {
      const s = a.kind === "send" || a.kind === "recv" ? inputs[a.step] : null;
      if (a.kind === "send") {
        await gpu.dispatchSend(a.rank, s![a.rank].dispatch);
        await ref.dispatchSend(a.rank, s![a.rank].dispatch);
      } else if (a.kind === "recv") {
        await gpu.dispatchRecv(a.rank);
        await ref.dispatchRecv(a.rank);
      } else if (a.kind === "csend") {
        const out = randomExpertOut(gpu.layout.rows, config.hidden, rand);
        await gpu.combineSend(a.rank, out);
        await ref.combineSend(a.rank, out);
      } else {
        const w = inputs[a.step][a.rank].weights;
        await gpu.combineRecv(a.rank, w);
        await ref.combineRecv(a.rank, w);
      }
      const where = `step ${a.step} ${a.kind}(rank ${a.rank})`;
      for (let r = 0; r < config.ranks; r++) expect(await gpu.stats(r), where).toEqual(await ref.stats(r));
    }
  } finally {
    await gpu.destroy();
    await ref.destroy();
  }
}

describe("stats: bytes really moved, as core's reference counts them", () => {
  const base = { ranks: 3, experts: 6, topK: 3, hidden: 9, maxTokensPerRank: 4 } as const;

  it("masked and contiguous, bf16 and fp8 dispatch, a DP group", async () => {
    await compareStats(defineConfig(base), 1, 2);
    await compareStats(defineConfig({ ...base, layout: "contiguous", expertAlignment: 2 }), 2, 2);
    const fp8 = { ...base, hidden: 128, dispatchDtype: "fp8-e4m3" } as const;
    await compareStats(defineConfig(fp8), 3, 1);
    await compareStats(defineConfig({ ...fp8, layout: "contiguous" }), 4, 1);
    await compareStats(defineConfig({ ...base, ranks: 4, experts: 8, dpSize: 2 }), 5, 2);
  });

  it("combineWeights home: a combine row is one (token, slot) row, sent and received", async () => {
    const home = { ...base, combineWeights: "home" } as const;
    await compareStats(defineConfig(home), 6, 2);
    await compareStats(defineConfig({ ...home, ranks: 4, experts: 8, dpSize: 2 }), 7, 2);
    // the rows a home receives are its tokens' used slots (not the tokens), 2 H bytes each
    const config = defineConfig({ ...home, maxTokensPerRank: 4 });
    const { gpu } = await createPair(config);
    try {
      const rand = rng(8);
      const inputs = randomInputs(config, rand, { tokens: 4, unused: 0 }).map((i) =>
        homeSplit(config, i, rand),
      );
      for (let r = 0; r < 3; r++) await gpu.dispatchSend(r, inputs[r].dispatch);
      for (let r = 0; r < 3; r++) {
        await gpu.dispatchRecv(r);
        await gpu.combineSend(r, randomExpertOut(gpu.layout.rows, config.hidden, rand));
      }
      for (let r = 0; r < 3; r++) await gpu.combineRecv(r, inputs[r].weights);
      for (let r = 0; r < 3; r++) {
        const st = await gpu.stats(r);
        const idx = inputs[r].dispatch.topkIdx;
        expect(st.combineReceived!.rows.reduce((a, b) => a + b, 0)).toBe(idx.filter((e) => e >= 0).length);
        expect(st.combineReceived!.bytes[0]).toBe(st.combineReceived!.rows[0] * rowBytes(config, "combine"));
      }
    } finally {
      await gpu.destroy();
    }
  });

  it("a dispatch row is one route record, a combine row one partial", async () => {
    const config = defineConfig({ ...base, hidden: 128, dispatchDtype: "fp8-e4m3" });
    const W = 2 + 4 * Math.min(config.topK, config.experts / config.ranks);
    expect(rowBytes(config, "dispatch")).toBe(128 + 4 * 1 + 4 * W);
    expect(rowBytes(config, "combine")).toBe(2 * 128);
  });
});
