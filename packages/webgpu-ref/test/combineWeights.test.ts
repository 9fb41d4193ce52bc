import {
  type DispatchInput,
  decodeBf16,
  defineConfig,
  type EpConfig,
  encodeBf16,
  InputError,
  ReferenceSession,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { webgpuBackend } from "../src/index.js";
import { WebGpuSession } from "../src/session.js";
import { runAgainstReference } from "./helpers.js";

/**
 * One step of a hand-built home config on the WebGPU session and core's reference: every rank
 * dispatches `inputs[r]`, every expert output row of slot k holds `outOfSlot(k)` in each element,
 * each rank passes `weights[r]` to combineRecv. Returns both sessions' y per rank.
 */
async function homeStep(
  config: EpConfig,
  inputs: DispatchInput[],
  outOfSlot: (k: number) => number,
  weights: Float32Array[],
): Promise<{ gpu: Uint16Array[]; ref: Uint16Array[] }> {
  const H = config.hidden;
  const run = async (session: WebGpuSession | ReferenceSession) => {
    try {
      for (let r = 0; r < config.ranks; r++) await session.dispatchSend(r, inputs[r]);
      for (let r = 0; r < config.ranks; r++) {
        const got = await session.dispatchRecv(r);
        const out = new Uint16Array(session.layout.rows * H);
        for (let row = 0; row < session.layout.rows; row++) {
          const slot = got.meta[row * 4 + 2];
          if (slot >= 0) out.fill(encodeBf16([outOfSlot(slot)])[0], row * H, (row + 1) * H);
        }
        await session.combineSend(r, out);
      }
      const ys: Uint16Array[] = [];
      for (let r = 0; r < config.ranks; r++) ys.push(await session.combineRecv(r, weights[r]));
      return ys;
    } finally {
      await session.destroy();
    }
  };
  return { gpu: await run(await WebGpuSession.create(config)), ref: await run(new ReferenceSession(config)) };
}

const bf16 = (x: number) => encodeBf16([x])[0];

describe("combineWeights home on WebGPU", () => {
  it("declares expert and home, and runs a home session", async () => {
    expect(webgpuBackend.capabilities.combineWeights).toEqual(["expert", "home"]);
    const config = defineConfig({
      ranks: 2,
      experts: 4,
      topK: 2,
      hidden: 64,
      maxTokensPerRank: 2,
      combineWeights: "home",
    });
    const session = await webgpuBackend.createSession(config);
    expect(session.layout.regions.combineX.shape).toEqual([2, 2, 64]);
    await session.destroy();
  });

  it("sums the slots in ascending slot order across ranks: (2^40 + -2^40) + 1, not a rank order", async () => {
    // 3 ranks, one expert each; token 0 of rank 0: slot 0 on rank 2, slot 1 on rank 0, slot 2 on rank 1
    const config = defineConfig({
      ranks: 3,
      experts: 3,
      topK: 3,
      hidden: 3,
      maxTokensPerRank: 1,
      combineWeights: "home",
    });
    const none: DispatchInput = { x: new Uint16Array(0), topkIdx: new Int32Array(0) };
    const inputs = [{ x: encodeBf16([1, 2, 3]), topkIdx: Int32Array.of(2, 0, 1) }, none, none];
    const outs = [2 ** 40, -(2 ** 40), 1];
    const w = [Float32Array.of(1, 1, 1), new Float32Array(0), new Float32Array(0)];
    const { gpu, ref } = await homeStep(config, inputs, (k) => outs[k], w);
    // slot order gives 1; ascending rank order (-2^40 + 1) + 2^40 would give 0
    expect(Array.from(gpu[0])).toEqual([bf16(1), bf16(1), bf16(1)]);
    expect(Array.from(gpu[0])).toEqual(Array.from(ref[0]));
    // the weights are the ones passed to combineRecv: halving slot 2's halves y
    const half = await homeStep(config, inputs, (k) => outs[k], [Float32Array.of(1, 1, 0.5), w[1], w[2]]);
    expect(Array.from(decodeBf16(half.gpu[0]))).toEqual([0.5, 0.5, 0.5]);
    expect(Array.from(half.gpu[0])).toEqual(Array.from(half.ref[0]));
  });

  it("zero signs: -0 from one tiny negative product, +0 from cancelling ones and from no used slot", async () => {
    const config = defineConfig({
      ranks: 2,
      experts: 4,
      topK: 2,
      hidden: 2,
      maxTokensPerRank: 3,
      combineWeights: "home",
    });
    const x = encodeBf16([1, 1, 1, 1, 1, 1]);
    // token 0: one used slot, product 2^-10 * -2^-125 = -2^-135 (bf16 -0); token 1: two slots
    // whose products cancel; token 2: no used slot
    const idx = Int32Array.of(0, -1, 1, 2, -1, -1);
    const inputs = [
      { x, topkIdx: idx },
      { x, topkIdx: idx },
    ];
    const outOfSlot = (k: number) => (k === 0 ? -(2 ** -125) : 2 ** -125);
    const w = Float32Array.of(2 ** -10, 0, 1, 1, 3, 3);
    const { gpu, ref } = await homeStep(config, inputs, outOfSlot, [w, w]);
    for (let r = 0; r < 2; r++) {
      expect(Array.from(gpu[r])).toEqual(Array.from(ref[r]));
      expect(Array.from(gpu[r])).toEqual([0x8000, 0x8000, 0, 0, 0, 0]);
    }
  });

  it("odd hidden, DP groups, small storage windows, special expert outputs: bit-exact with the reference, every heap byte too", async () => {
    const base = { experts: 8, topK: 5, maxTokensPerRank: 5, combineWeights: "home" } as const;
    await runAgainstReference(defineConfig({ ...base, ranks: 4, hidden: 33, dpSize: 2 }), 11, 3, {
      heaps: true,
      specialOutputs: true,
    });
    await runAgainstReference(defineConfig({ ...base, ranks: 2, hidden: 257 }), 12, 2, {
      heaps: true,
      maxBindingBytes: 2048,
    });
  });

  it("refuses weights at dispatch and bad weights at combineRecv, after the phase check, with core's InputError", async () => {
    const config = defineConfig({
      ranks: 1,
      experts: 2,
      topK: 2,
      hidden: 4,
      maxTokensPerRank: 2,
      combineWeights: "home",
    });
    const s = await WebGpuSession.create(config);
    try {
      const input = { x: new Uint16Array(8), topkIdx: Int32Array.of(0, 1, 1, -1) };
      await expect(s.dispatchSend(0, { ...input, topkWeights: new Float32Array(4) })).rejects.toThrow(
        /topkWeights.*given to dispatch, but combineWeights is "home"/,
      );
      await s.dispatchSend(0, input);
      await expect(s.combineRecv(0, new Float32Array(4))).rejects.toThrow(/PhaseError|combineSend/);
      await s.dispatchRecv(0);
      await s.combineSend(0, new Uint16Array(s.layout.rows * 4).fill(bf16(2)));
      await expect(s.combineRecv(0)).rejects.toThrow(InputError);
      await expect(s.combineRecv(0)).rejects.toThrow(/missing at combineRecv/);
      await expect(s.combineRecv(0, new Float32Array(3))).rejects.toThrow(/length 3 at combineRecv/);
      await expect(s.combineRecv(0, Float32Array.of(1, 1, Number.NaN, 1))).rejects.toThrow(/not finite/);
      // the weights are copied when the call is made: changing them afterwards changes nothing
      const w = Float32Array.of(1, 0.5, 0.25, 8);
      const y = s.combineRecv(0, w);
      w.fill(100);
      expect(Array.from(decodeBf16(await y))).toEqual([3, 3, 3, 3, 0.5, 0.5, 0.5, 0.5]);
    } finally {
      await s.destroy();
    }
  });
});
