import { describe, expect, it } from "vitest";
import { describeMemory, growth, settledMemory } from "../../../test-support/memory.js";
import { SOAK_WORLDS } from "../../../test-support/soakWorlds.js";
import {
  defineConfig,
  deliveredRows,
  type EpConfig,
  encodeBf16,
  quantizeRows,
  type RankInput,
  ReferenceSession,
  referenceCombine,
  referenceDispatch,
  seededRandom,
} from "../src/index.js";

const rng = seededRandom;

function stepInputs(config: EpConfig, rand: () => number): RankInput[] {
  const { topK: K, hidden: H, experts: E } = config;
  const hot = Math.floor(rand() * E);
  const groups = Array.from({ length: config.ranks / config.dpSize }, () => {
    const T = Math.floor(rand() * (config.maxTokensPerRank + 1));
    const topkIdx = new Int32Array(T * K).fill(-1);
    for (let t = 0; t < T; t++) {
      const used = new Set<number>();
      for (let k = 0; k < K; k++) {
        const e = rand() < 0.4 ? hot : Math.floor(rand() * E);
        if (rand() < 0.15 || used.has(e)) continue;
        used.add(e);
        topkIdx[t * K + k] = e;
      }
    }
    const topkWeights = Float32Array.from({ length: T * K }, () => rand());
    const bf16 = encodeBf16(Array.from({ length: T * H }, () => (rand() - 0.5) * 8));
    if (config.inputDtype === "bf16") return { x: bf16, topkIdx, topkWeights };
    const { q, scales } = quantizeRows(bf16, H);
    return { x: q, scales, topkIdx, topkWeights };
  });
  return Array.from({ length: config.ranks }, (_, r) => groups[Math.floor(r / config.dpSize)]);
}

const worlds = SOAK_WORLDS.map((w) => defineConfig(w));

const STEPS = 2000;

describe("soak: the reference protocol over many steps", () => {
  it("runs 2,000 steps with routing, token counts and layouts changing every step, each checked", async () => {
    const rand = rng(2026);
    const sessions = worlds.map((c) => new ReferenceSession(c));
    let mismatches = 0;
    const before = await settledMemory();
    for (let step = 0; step < STEPS; step++) {
      const session = sessions[step % sessions.length];
      const config = session.config;
      const L = config.experts / config.ranks;
      const inputs = stepInputs(config, rand);
      const order = Array.from({ length: config.ranks }, (_, r) => r).sort(() => rand() - 0.5);
      for (const r of order) await session.dispatchSend(r, inputs[r]);
      const want = referenceDispatch(config, inputs);
      // Expert e's output for a row: the row's first hidden element, shifted by the expert id, in every column.
      const outputOf = (e: number, src: number, token: number, slot: number) =>
        Uint16Array.from({ length: config.hidden }, () => 0x3f80 + e + src * 7 + token * 3 + slot);
      for (const r of order.slice().reverse()) {
        const got = await session.dispatchRecv(r);
        const rows = deliveredRows(config, got);
        if (rows.length !== want[r].flat().length) mismatches++;
        const out = new Uint16Array(session.layout.rows * config.hidden);
        for (const { row, localExpert } of rows) {
          const [src, token, slot] = got.meta.subarray(row * 4, row * 4 + 3);
          const ref = want[r][localExpert].find(
            (w) => w.srcRank === src && w.srcToken === token && w.slot === slot,
          );
          const payload = got.x.subarray(row * config.hidden, (row + 1) * config.hidden);
          if (!ref || ref.x.some((v, i) => v !== payload[i])) mismatches++;
          out.set(outputOf(r * L + localExpert, src, token, slot), row * config.hidden);
        }
        await session.combineSend(r, out);
      }
      const yWant = referenceCombine(config, inputs, outputOf);
      for (const r of order) {
        const y = await session.combineRecv(r);
        if (y.length !== yWant[r].length || y.some((v, i) => v !== yWant[r][i])) mismatches++;
      }
    }
    const after = await settledMemory();
    console.log(`soak (reference, seed 2026): ${STEPS} steps, ${mismatches} mismatches`);
    console.log(describeMemory("soak (reference)", before, after) + (after.collected ? " (after gc)" : ""));
    expect(mismatches).toBe(0);
    // Buffers are reused step after step: nothing may pile up (8 MiB is under 5 KiB a step).
    expect(growth(before, after).heapUsed).toBeLessThan(8 * 2 ** 20);
    expect(growth(before, after).arrayBuffers).toBeLessThan(2 * 2 ** 20);
  }, 120_000);
});
