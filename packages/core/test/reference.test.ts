import { describe, expect, it } from "vitest";
import {
  bf16ToNumber,
  decodeSignal,
  defineConfig,
  encodeBf16,
  encodeSignal,
  epochOfStep,
  PhaseError,
  ProtocolError,
  ReferenceSession,
  readSignal,
  referenceCombine,
  referenceDispatch,
} from "../src/index.js";

// Two ranks, two experts each (rank 0: experts 0, 1; rank 1: experts 2, 3), top-2, hidden 2.
const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 2, maxTokensPerRank: 3 });
const inputs = [
  {
    x: encodeBf16([1, 2, 3, 4]),
    topkIdx: Int32Array.from([3, 0, -1, 2]),
    topkWeights: Float32Array.from([0.5, 0.25, 9, 2]),
  },
  { x: encodeBf16([5, 6]), topkIdx: Int32Array.from([-1, -1]), topkWeights: Float32Array.from([1, 1]) },
];

describe("reference semantics, by hand", () => {
  it("dispatch sends each token to the experts it names, in (srcRank, srcToken) order", () => {
    const d = referenceDispatch(config, inputs);
    const rows = d.map((rank) => rank.map((expert) => expert.map((r) => [r.srcRank, r.srcToken, r.slot])));
    expect(rows).toEqual([
      [[[0, 0, 1]], []],
      [[[0, 1, 1]], [[0, 0, 0]]],
    ]);
  });

  it("combine sums weight * expert output in slot order and skips unused slots", () => {
    const out = (e: number) => encodeBf16([e + 1, -(e + 1)]);
    const y = referenceCombine(config, inputs, (e) => out(e));
    expect(Array.from(y[0], bf16ToNumber)).toEqual([
      0.5 * 4 + 0.25 * 1,
      -(0.5 * 4 + 0.25 * 1),
      2 * 3,
      -2 * 3,
    ]);
    expect(Array.from(y[1], bf16ToNumber)).toEqual([0, 0]);
  });
});

describe("signal words", () => {
  it("distinguish zero counts, epochs and never-written words", () => {
    expect(decodeSignal(0)).toBeNull();
    expect(decodeSignal(encodeSignal(5, 0))).toEqual({ epoch: 5, count: 0 });
    expect(decodeSignal(encodeSignal(2047, 2 ** 21 - 2))).toEqual({ epoch: 2047, count: 2 ** 21 - 2 });
    expect(epochOfStep(0)).toBe(1);
    expect(epochOfStep(2047)).toBe(1);
  });
});

describe("ReferenceSession protocol checks", () => {
  it("refuses a receive whose peer has not sent, then runs the step once it has", async () => {
    const s = new ReferenceSession(config);
    await s.dispatchSend(0, inputs[0]);
    await expect(s.dispatchRecv(0)).rejects.toThrow(ProtocolError);
    await expect(s.dispatchRecv(0)).rejects.toThrow(/signal from rank 1 is missing/);
    await s.dispatchSend(1, inputs[1]);
    const r0 = await s.dispatchRecv(0);
    expect(Array.from(r0.expertCounts)).toEqual([1, 0]);
  });

  it("refuses combine before dispatch with a PhaseError", async () => {
    const s = new ReferenceSession(config);
    await expect(s.combineRecv(1)).rejects.toThrow(PhaseError);
    await expect(s.combineSend(0, new Uint16Array(0))).rejects.toThrow(/dispatchRecv/);
  });

  it("reports a signal left from the previous step as stale", async () => {
    const s = new ReferenceSession(config);
    const step = async (only?: number) => {
      for (let r = 0; r < 2; r++) if (only === undefined || only === r) await s.dispatchSend(r, inputs[r]);
    };
    await step();
    for (let r = 0; r < 2; r++) await s.dispatchRecv(r);
    for (let r = 0; r < 2; r++) await s.combineSend(r, new Uint16Array(s.layout.rows * 2));
    for (let r = 0; r < 2; r++) await s.combineRecv(r);
    await step(0);
    await expect(s.dispatchRecv(0)).rejects.toThrow(/stale: epoch 1, this step is epoch 2/);
  });
});

describe("readSignal", () => {
  const where = { rank: 0, stage: "dispatch recv", region: "dispatchSignal", peer: 3, epoch: 2, max: 4 };
  it.each([
    [0, /missing/],
    [encodeSignal(1, 2), /stale: epoch 1/],
    [(2 << 21) >>> 0, /malformed/],
    [encodeSignal(2, 5), /counts 5 rows, more than the 4/],
  ])("refuses word %s naming the peer", (word, message) => {
    try {
      readSignal(word, where);
      throw new Error("accepted");
    } catch (e) {
      expect(e).toBeInstanceOf(ProtocolError);
      expect((e as ProtocolError).peer).toBe(3);
      expect((e as Error).message).toMatch(message);
    }
  });
  it("accepts this step's word", () => {
    expect(readSignal(encodeSignal(2, 0), where)).toBe(0);
  });
});
