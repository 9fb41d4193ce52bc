import { describe, expect, it } from "vitest";
import { describeMemory, growth, settledMemory } from "../../../test-support/memory.js";
import {
  DestroyedError,
  defineConfig,
  encodeBf16,
  type RankInput,
  type ReferenceSession,
  referenceBackend,
} from "../src/index.js";

// R4, E16, H256, M32, masked: each session's heaps are 4 x 330 KiB = 1.3 MiB, so a session that
// leaked its heaps would grow arrayBuffers by 1.3 MiB a cycle (1.3 GiB over the run).
const config = defineConfig({ ranks: 4, experts: 16, topK: 4, hidden: 256, maxTokensPerRank: 32 });
const CYCLES = 1000;
/**
 * Allowed growth over all cycles: far below one leaked session's heaps per cycle. rss is judged on
 * the second half of the cycles, doubled: a leak grows every cycle alike, while the allocator's and
 * V8's one-off growth to their working size (tens of MiB when other tests load the machine, heap
 * flat) lands in the first half.
 */
const BOUND = { heapUsed: 4 * 2 ** 20, arrayBuffers: 2 * 2 ** 20, rss: 48 * 2 ** 20 };

/** Two tokens per rank, to three experts on different ranks, so every cycle moves rows through the heaps. */
function inputs(): RankInput[] {
  return Array.from({ length: config.ranks }, (_, r) => ({
    x: encodeBf16(Array.from({ length: 2 * config.hidden }, (_, i) => (i % 7) - 3 + r)),
    topkIdx: Int32Array.from([r, 15 - r, -1, -1, (r + 5) % 16, -1, -1, -1]),
    topkWeights: new Float32Array(2 * config.topK).fill(0.5),
  }));
}

/** One cycle; returns whether the destroyed session refused a call with DestroyedError. */
async function cycle(): Promise<boolean> {
  const s = (await referenceBackend.createSession(config)) as ReferenceSession;
  const ins = inputs();
  for (let r = 0; r < config.ranks; r++) await s.dispatchSend(r, ins[r]);
  for (let r = 0; r < config.ranks; r++) {
    await s.dispatchRecv(r);
    await s.combineSend(r, new Uint16Array(s.layout.rows * config.hidden));
  }
  for (let r = 0; r < config.ranks; r++) await s.combineRecv(r);
  await s.destroy();
  return s.dispatchRecv(0).then(
    () => false,
    (e) => e instanceof DestroyedError,
  );
}

describe("create / destroy", () => {
  it(`${CYCLES} reference sessions created, stepped and destroyed leave memory flat`, async () => {
    for (let i = 0; i < 50; i++) await cycle(); // warm-up: JIT, lazily created state
    const before = await settledMemory();
    let refused = 0;
    let middle = before;
    for (let i = 0; i < CYCLES; i++) {
      if (await cycle()) refused++;
      if (i === CYCLES / 2 - 1) middle = await settledMemory();
    }
    const after = await settledMemory();
    expect(refused).toBe(CYCLES);
    const g = growth(before, after);
    console.log(
      `${describeMemory(`${CYCLES} create/step/destroy cycles (reference)`, before, after)}` +
        `${after.collected ? " (after gc)" : " (no --expose-gc: measured without forcing gc)"}; ` +
        `rss over the second half ${((after.rss - middle.rss) / 2 ** 20).toFixed(2)} MiB`,
    );
    expect(g.heapUsed).toBeLessThan(BOUND.heapUsed);
    expect(g.arrayBuffers).toBeLessThan(BOUND.arrayBuffers);
    expect(2 * (after.rss - middle.rss)).toBeLessThan(BOUND.rss);
  }, 60_000);
});
