import { fileURLToPath } from "node:url";
import {
  DestroyedError,
  defineConfig,
  type EpConfig,
  InputError,
  ReferenceSession,
  type StepStats,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { expertOutputs, makeInputs } from "../src/checks/step.js";
import { WorkerGroup } from "../src/launcher.js";
import { CudaSession } from "../src/session.js";
import { SessionStats } from "../src/sessionStats.js";

/** One step on core's reference session, recording the same facts CudaSession records. */
async function bothStats(config: EpConfig, seed: number) {
  const ref = new ReferenceSession(config);
  const mine = new SessionStats(config);
  const R = config.ranks;
  const inputs = makeInputs(config, config.maxTokensPerRank, seed);
  const snap: { ref: StepStats[]; mine: StepStats[] }[] = [];
  const both = async () =>
    snap.push({
      ref: await Promise.all(Array.from({ length: R }, (_, r) => ref.stats(r))),
      mine: Array.from({ length: R }, (_, r) => mine.get(r)),
    });
  for (let r = 0; r < R; r++) {
    await ref.dispatchSend(r, inputs[r]);
    mine.dispatchSend(r, 0, inputs[r].topkIdx);
  }
  await both();
  const results = [];
  for (let r = 0; r < R; r++) {
    results.push(await ref.dispatchRecv(r));
    mine.dispatchRecv(r, results[r].sourceCounts, null);
  }
  await both();
  for (let r = 0; r < R; r++) {
    await ref.combineSend(r, expertOutputs(config, r, results[r]));
    mine.combineSend(r);
  }
  await both();
  for (let r = 0; r < R; r++) {
    await ref.combineRecv(r);
    mine.combineRecv(r, null);
  }
  await both();
  return snap;
}

describe("CudaSession stats bookkeeping (no GPU)", () => {
  for (const dpSize of [1, 2]) {
    it(`rows and bytes per peer equal core's reference session after every call (dpSize ${dpSize})`, async () => {
      const config = defineConfig({
        ranks: 4,
        dpSize,
        experts: 16,
        topK: 3,
        hidden: 256,
        maxTokensPerRank: 12,
        dispatchDtype: "fp8-e4m3",
      });
      for (const { ref, mine } of await bothStats(config, 5 + dpSize)) expect(mine).toEqual(ref);
    });
  }

  it("with device stats, the kernels' counts and waits replace the host's", () => {
    const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 4 });
    const s = new SessionStats(config);
    s.dispatchSend(1, 3, Int32Array.from([0, 3, 1, -1]));
    expect(s.get(1)).toMatchObject({ step: 3, completed: "dispatchSend", dispatchSent: { rows: [2, 1] } });
    const device = {
      dispatchSent: [5, 6],
      dispatchReceived: [1, 1],
      combineSent: [7, 8],
      combineReceived: [9, 10],
      dispatchWaitMs: [0.5, 900],
      combineWaitMs: [0.25, 0.75],
    };
    s.dispatchRecv(1, Int32Array.from([1, 0, 0, 1]), device);
    s.combineSend(1);
    expect(s.get(1).combineSent?.rows).toEqual([1, 1]);
    s.combineRecv(1, device);
    expect(s.get(1)).toMatchObject({
      completed: "combineRecv",
      dispatchSent: { rows: [5, 6] },
      dispatchReceived: { rows: [1, 1] },
      combineSent: { rows: [7, 8], bytes: [7 * 128, 8 * 128] },
      combineReceived: { rows: [9, 10] },
      dispatchWaitMs: [0.5, 900],
      combineWaitMs: [0.25, 0.75],
    });
  });

  it("CudaSession.stats refuses a bad rank and a destroyed session, and answers after a step", async () => {
    const fake = fileURLToPath(new URL("./fixtures/fakeFaultWorker.mjs", import.meta.url));
    const group = await WorkerGroup.launch({ ranks: 2, workerPath: fake });
    try {
      const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 4 });
      const s = await CudaSession.open(config, group, 1000, { release: async () => {} });
      expect(await s.stats(0)).toMatchObject({ rank: 0, step: 0, completed: null, dispatchSent: null });
      await expect(s.stats(2)).rejects.toBeInstanceOf(InputError);
      const inputs = makeInputs(config, 4, 3);
      await s.dispatchSend(0, inputs[0]);
      expect((await s.stats(0)).dispatchSent?.rows).toEqual(
        [0, 1].map(
          (p) => Array.from(inputs[0].topkIdx).filter((e) => e >= 0 && Math.floor(e / 2) === p).length,
        ),
      );
      await s.destroy();
      await expect(s.stats(0)).rejects.toBeInstanceOf(DestroyedError);
    } finally {
      await group.close();
    }
  });
});
