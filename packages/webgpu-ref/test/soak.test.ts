import {
  defineConfig,
  deliveredRows,
  type EpConfig,
  referenceCombine,
  referenceDispatch,
  type Session,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { describeMemory, growth, settledMemory } from "../../../test-support/memory.js";
import { SOAK_WORLDS } from "../../../test-support/soakWorlds.js";
import { webgpuBackend } from "../src/index.js";
import { int, randomInputs, rng } from "./helpers.js";

/** 300 in CI; SWITCHYARD_SOAK_STEPS runs a longer soak by hand. */
const STEPS = Number(process.env.SWITCHYARD_SOAK_STEPS ?? 300);
/** Steps per world before the first memory sample (Dawn's and the allocator's pools fill up first). */
const WARM_UP = 10;
const SEED = 2027;

/** The soak worlds (test-support/soakWorlds.ts), defined. */
const worlds: EpConfig[] = SOAK_WORLDS.map((w) => defineConfig(w));

/** Expert output for a row: a function of (expert, source, token, slot), the same in every column. */
function outputOf(config: EpConfig) {
  return (e: number, src: number, token: number, slot: number) =>
    new Uint16Array(config.hidden).fill(0x3f80 + e + src * 7 + token * 3 + slot);
}

/** One step on `session` in a random rank order; returns the number of results that differ from the reference. */
async function step(session: Session, rand: () => number): Promise<number> {
  const config = session.config;
  const L = config.experts / config.ranks;
  const H = config.hidden;
  const inputs = randomInputs(config, rand, { specials: false, unused: rand() < 0.3 ? 0.5 : 0.1 });
  const order = Array.from({ length: config.ranks }, (_, r) => r).sort(() => rand() - 0.5);
  for (const r of order) await session.dispatchSend(r, inputs[r]);
  const want = referenceDispatch(config, inputs);
  const out = outputOf(config);
  let mismatches = 0;
  for (const r of order.slice().reverse()) {
    const got = await session.dispatchRecv(r);
    const rows = deliveredRows(config, got);
    if (rows.length !== want[r].flat().length) mismatches++;
    const expertOut = new Uint16Array(session.layout.rows * H);
    for (const { row, localExpert } of rows) {
      const [src, token, slot] = got.meta.subarray(row * 4, row * 4 + 3);
      const ref = want[r][localExpert].find(
        (w) => w.srcRank === src && w.srcToken === token && w.slot === slot,
      );
      const payload = got.x.subarray(row * H, (row + 1) * H);
      const scales = got.scales?.subarray(row * (H / 128), (row + 1) * (H / 128));
      if (!ref || ref.x.some((v, i) => v !== payload[i])) mismatches++;
      else if (ref.scales && (!scales || ref.scales.some((v, i) => !Object.is(v, scales[i])))) mismatches++;
      expertOut.set(out(r * L + localExpert, src, token, slot), row * H);
    }
    await session.combineSend(r, expertOut);
  }
  const yWant = referenceCombine(config, inputs, out);
  for (const r of order) {
    const y = await session.combineRecv(r);
    if (y.length !== yWant[r].length || y.some((v, i) => v !== yWant[r][i])) mismatches++;
  }
  return mismatches;
}

describe("soak: the WebGPU protocol over many steps", () => {
  it(`runs ${STEPS} steps with routing, token counts and layouts changing every step, each checked`, async () => {
    const rand = rng(SEED);
    const sessions = await Promise.all(worlds.map((c) => webgpuBackend.createSession(c)));
    let mismatches = 0;
    try {
      for (let i = 0; i < WARM_UP * worlds.length; i++)
        mismatches += await step(sessions[i % worlds.length], rand);
      const before = await settledMemory();
      for (let i = 0; i < STEPS; i++)
        mismatches += await step(sessions[int(rand, 0, worlds.length - 1)], rand);
      const after = await settledMemory();
      console.log(
        `soak (webgpu, seed ${SEED}): ${STEPS} steps (+${WARM_UP * worlds.length} warm-up) over ${worlds.length} worlds, ${mismatches} mismatches`,
      );
      console.log(describeMemory("soak (webgpu)", before, after) + (after.collected ? " (after gc)" : ""));
      expect(mismatches).toBe(0);
      // Buffers are reused step after step: nothing may pile up.
      const g = growth(before, after);
      expect(g.heapUsed).toBeLessThan(8 * 2 ** 20);
      expect(g.external).toBeLessThan(4 * 2 ** 20);
      expect(g.rss).toBeLessThan(96 * 2 ** 20); // lavapipe and malloc pools settle; a leak per step would not
    } finally {
      for (const s of sessions) await s.destroy();
    }
  }, 120_000);
});
