import { describe, expect, it } from "vitest";
import {
  bf16ToNumber,
  COMBINE_WEIGHTS,
  ConfigError,
  combineTokenAtHome,
  combineWeightsOf,
  computeLayout,
  defineConfig,
  type EpConfig,
  type ExpertOutputOf,
  encodeBf16,
  InputError,
  numberToBf16,
  type RankInput,
  ReferenceSession,
  referenceCombine,
} from "../src/index.js";

// Two ranks, two experts each (rank 0: experts 0, 1; rank 1: experts 2, 3), top-3, hidden 2.
const base = { ranks: 2, experts: 4, topK: 3, hidden: 2, maxTokensPerRank: 3 } as const;
const home = defineConfig({ ...base, combineWeights: "home" });
const expert = defineConfig(base);

/** An expert output keyed by provenance: element h = (expert + 1) * (h ? -1 : 1) + slot / 4. */
const outputOf: ExpertOutputOf = (e, _src, token, slot) =>
  encodeBf16([e + 1 + slot / 4 + token, -(e + 1) + slot / 4]);

/** Runs one step on a reference session; weights go to dispatch or to combineRecv by the config's mode. */
async function step(
  config: EpConfig,
  inputs: RankInput[],
  combineWeights = inputs.map((i) => i.topkWeights),
) {
  const session = new ReferenceSession(config);
  const atHome = combineWeightsOf(config) === "home";
  for (let r = 0; r < config.ranks; r++) {
    const { topkWeights, ...rest } = inputs[r];
    await session.dispatchSend(r, atHome ? rest : { ...rest, topkWeights });
  }
  for (let r = 0; r < config.ranks; r++) {
    const got = await session.dispatchRecv(r);
    const out = new Uint16Array(session.layout.rows * config.hidden);
    const L = config.experts / config.ranks;
    for (let e = 0; e < L; e++) {
      for (let i = 0; i < got.expertCounts[e]; i++) {
        const row = got.expertOffsets[e] + i;
        const [src, token, slot, local] = got.meta.subarray(row * 4, row * 4 + 4);
        out.set(outputOf(r * L + local, src, token, slot), row * config.hidden);
      }
    }
    await session.combineSend(r, out);
  }
  const ys: Uint16Array[] = [];
  const stats = [];
  for (let r = 0; r < config.ranks; r++) {
    ys.push(await session.combineRecv(r, atHome ? combineWeights[r] : undefined));
    stats.push(await session.stats(r));
  }
  return { ys, stats };
}

const inputs: RankInput[] = [
  {
    x: encodeBf16([1, 2, 3, 4]),
    topkIdx: Int32Array.from([3, 0, 1, 2, -1, 3]),
    topkWeights: Float32Array.from([0.5, -0.25, 2 ** -140, 2, 9, 0]),
  },
  {
    x: encodeBf16([5, 6]),
    topkIdx: Int32Array.from([-1, -1, -1]),
    topkWeights: Float32Array.from([1, 1, 1]),
  },
];

describe("combineWeights in the config", () => {
  it("is expert when left out, accepts home with the masked layout and names the modes", () => {
    expect(COMBINE_WEIGHTS).toEqual(["expert", "home"]);
    expect(combineWeightsOf(expert)).toBe("expert");
    expect(combineWeightsOf(home)).toBe("home");
    expect(expert.combineWeights).toBeUndefined();
  });

  it("refuses an unknown mode and home with the contiguous layout, with a ConfigError that says why", () => {
    const bad = () => defineConfig({ ...base, combineWeights: "rank" as never });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow('EpConfig.combineWeights = "rank": must be one of expert, home');
    const contiguous = () => defineConfig({ ...base, layout: "contiguous", combineWeights: "home" });
    expect(contiguous).toThrow(ConfigError);
    expect(contiguous).toThrow(
      /needs the masked layout, and layout is contiguous: a row per \(token, expert\) back suits decode batches only; pass the weights to dispatch/,
    );
    expect(defineConfig({ ...base, layout: "contiguous", combineWeights: "expert" }).combineWeights).toBe(
      "expert",
    );
  });
});

describe("combineWeights in the layout", () => {
  it("home: combineX holds one row per (token, slot), [M, K, H] bf16; expert one partial per (rank, token)", () => {
    const M = 48;
    const big = { ranks: 4, experts: 32, topK: 8, hidden: 256, maxTokensPerRank: M } as const;
    const e = computeLayout(defineConfig(big));
    const h = computeLayout(defineConfig({ ...big, combineWeights: "home" }));
    expect(e.regions.combineX.shape).toEqual([4, M, 256]);
    expect(h.regions.combineX.shape).toEqual([M, 8, 256]);
    expect(h.regions.combineX.axes).toEqual(["token", "slot", "hidden"]);
    expect(h.regions.combineX.bytes).toBe(M * 8 * 256 * 2);
    expect(h.regions.combineX.symmetric).toBe(true);
    // Only combineX and what follows it in the symmetric heap moves; the heap grows by the difference.
    expect(h.symmetricBytes - e.symmetricBytes).toBe((8 - 4) * M * 256 * 2);
    expect(h.localBytes).toBe(e.localBytes);
    expect(h.bytesPerRank).toBe(h.symmetricBytes + h.localBytes);
    for (const name of ["countSignal", "dispatchX", "dispatchRoutes"] as const)
      expect(h.regions[name]).toEqual(e.regions[name]);
    expect(h.regions.combineSignal).toMatchObject({ offset: e.regions.combineSignal.offset, shape: [4] });
  });
});

describe("combine at home, by hand", () => {
  it("sums every used slot in ascending slot order from +0 and rounds once (no partial per rank)", () => {
    // Slots 0 and 2 name rank 0's experts, slot 1 rank 1's; products 2^40, -2^40, 1 at element 0.
    const idx = [0, 2, 1];
    const w = [1, 1, 1];
    const o = [encodeBf16([2 ** 40, 1]), encodeBf16([-(2 ** 40), 1]), encodeBf16([1, 1])];
    const y = combineTokenAtHome(2, idx, w, (k) => o[k]);
    // Slot order: (2^40 - 2^40) + 1 = 1. Per-rank partials (slots 0 and 2: 2^40 + 1 = 2^40 in fp32;
    // slot 1: -2^40) would give 0, and the reverse order (1 - 2^40) + 2^40 = 0 too.
    expect([...y].map(bf16ToNumber)).toEqual([1, 3]);
    const cfg = defineConfig({ ...base, topK: 3 });
    const row = { x: encodeBf16([0, 0]), topkIdx: Int32Array.from(idx), topkWeights: Float32Array.from(w) };
    const quiet = { x: new Uint16Array(0), topkIdx: new Int32Array(0), topkWeights: new Float32Array(0) };
    const out: ExpertOutputOf = (_e, _s, _t, k) => o[k];
    expect(bf16ToNumber(referenceCombine(cfg, [row, quiet], out)[0][0])).toBe(0);
    expect(bf16ToNumber(referenceCombine({ ...cfg, combineWeights: "home" }, [row, quiet], out)[0][0])).toBe(
      1,
    );
  });

  it("skips -1 slots (their outputs are never read), keeps zero and negative weights and subnormal products", () => {
    const idx = [-1, 2, 0, -1];
    const w = [1e30, 0, -1.5, 7];
    const outputs = (k: number) => {
      if (idx[k] < 0) throw new Error(`slot ${k} is unused and must not be read`);
      return encodeBf16([k === 1 ? 2 ** 100 : 2, 2 ** -120]);
    };
    const y = combineTokenAtHome(2, idx, w, outputs);
    // 0 * 2^100 = 0, then -1.5 * 2 = -3; element 1: 0 + -1.5 * 2^-120.
    expect([...y].map(bf16ToNumber)).toEqual([-3, -1.5 * 2 ** -120]);
    const sub = combineTokenAtHome(1, [1], [2 ** -140], () => encodeBf16([2 ** 10]));
    expect(bf16ToNumber(sub[0])).toBe(2 ** -130); // an fp32 subnormal weight, a bf16 subnormal y: not flushed
  });

  it("gives +0 for no used slot and for cancelling or all-zero products, -0 only for a tiny negative sum", () => {
    expect([...combineTokenAtHome(1, [-1, -1], [1, 1], () => encodeBf16([1]))]).toEqual([0]);
    expect([...combineTokenAtHome(1, [0, 1], [1, -1], () => encodeBf16([3]))]).toEqual([0]);
    expect([...combineTokenAtHome(1, [0, 1], [-1, 1], () => Uint16Array.of(0x0000))]).toEqual([0]);
    expect([...combineTokenAtHome(1, [0], [-(2 ** -135)], () => encodeBf16([1]))]).toEqual([0x8000]);
  });
});

describe("the reference session with combineWeights home", () => {
  it("is bit-exact with referenceCombine and takes the weights at combineRecv", async () => {
    const { ys } = await step(home, inputs);
    const want = referenceCombine(home, inputs, outputOf);
    expect(ys).toEqual(want);
    // Token 0: slots 0 (expert 3), 1 (expert 0), 2 (expert 1 with a subnormal weight).
    const t0 = [
      0.5 * bf16ToNumber(outputOf(3, 0, 0, 0)[0]),
      -0.25 * bf16ToNumber(outputOf(0, 0, 0, 1)[0]),
      2 ** -140 * bf16ToNumber(outputOf(1, 0, 0, 2)[0]),
    ];
    expect(bf16ToNumber(ys[0][0])).toBe(
      bf16ToNumber(numberToBf16(Math.fround(Math.fround(t0[0] + t0[1]) + t0[2]))),
    );
    // The weights at combine are the ones used: other weights give another y.
    const other = inputs.map((i) => i.topkWeights.map((v) => v * 2));
    const twice = await step(home, inputs, other);
    expect(bf16ToNumber(twice.ys[0][0])).toBe(2 * bf16ToNumber(ys[0][0]));
  });

  it("gives each rank of a DP group its own weights' sum of the same rows", async () => {
    const dp = defineConfig({ ...base, dpSize: 2, combineWeights: "home" });
    const same = [inputs[0], inputs[0]];
    const w1 = Float32Array.from([1, 1, 1, 1, 1, 1]);
    const { ys } = await step(dp, same, [inputs[0].topkWeights, w1]);
    expect(ys[0]).toEqual(referenceCombine(dp, same, outputOf)[0]);
    expect(ys[1]).toEqual(referenceCombine(dp, [same[0], { ...same[1], topkWeights: w1 }], outputOf)[1]);
    expect(ys[0]).not.toEqual(ys[1]);
  });

  it("counts one combine row per (token, slot) in stats, 2 * hidden bytes each", async () => {
    const { stats } = await step(home, inputs);
    // Rank 0's token 0 has slots on rank 0 (experts 0, 1) and rank 1 (expert 3); token 1 two on rank 1 (experts 2, 3).
    expect(stats[0].combineReceived?.rows).toEqual([2, 3]);
    expect(stats[0].combineReceived?.bytes).toEqual([2 * 4, 3 * 4]);
    expect(stats[0].combineSent?.rows).toEqual([2, 0]);
    expect(stats[1].combineSent?.rows).toEqual([3, 0]);
    const e = await step(expert, inputs);
    expect(e.stats[0].combineReceived?.rows).toEqual([1, 2]);
  });

  it("refuses weights given to dispatch, and combineRecv without, with a bad length or non-finite ones; the session goes on", async () => {
    const session = new ReferenceSession(home);
    await expect(session.dispatchSend(0, inputs[0])).rejects.toThrow(InputError);
    await expect(session.dispatchSend(0, inputs[0])).rejects.toThrow(
      /rank 0: topkWeights: given to dispatch, but combineWeights is "home".*passed to combineRecv/,
    );
    for (let r = 0; r < 2; r++) {
      const { topkWeights: _, ...rest } = inputs[r];
      await session.dispatchSend(r, rest);
    }
    for (let r = 0; r < 2; r++) await session.dispatchRecv(r);
    for (let r = 0; r < 2; r++)
      await session.combineSend(r, new Uint16Array(session.layout.rows * 2).fill(0x3f80));
    const refusals: [unknown, RegExp][] = [
      [undefined, /rank 0: topkWeights: missing at combineRecv: combineWeights is "home".*\[2, 3\]/],
      [new Float32Array(5), /length 5 at combineRecv, expected T\*topK = 2\*3 = 6/],
      [Float32Array.from([1, 1, 1, 1, Number.NaN, 1]), /topkWeights: \[1\]\[1\] = NaN is not finite/],
      [new Float64Array(6), /expected Float32Array/],
    ];
    for (const [w, message] of refusals) {
      const call = session.combineRecv(0, w as Float32Array);
      await expect(call).rejects.toThrow(InputError);
      await expect(session.combineRecv(0, w as Float32Array)).rejects.toThrow(message);
    }
    // Every output row is 1.0: y[t] is the sum of the used slots' weights, in slot order.
    const y = await session.combineRecv(0, inputs[0].topkWeights);
    expect([...y].map(bf16ToNumber)).toEqual([0.25, 0.25, 2, 2]); // token 1: slots 0 and 2 (weights 2, 0), not -1 slot 1
  });

  it("with combineWeights expert, refuses dispatch without weights and weights given to combineRecv", async () => {
    const session = new ReferenceSession(expert);
    const { topkWeights, ...rest } = inputs[0];
    await expect(session.dispatchSend(0, rest)).rejects.toThrow(/topkWeights: expected Float32Array/);
    await session.dispatchSend(0, inputs[0]);
    await session.dispatchSend(1, inputs[1]);
    for (let r = 0; r < 2; r++) await session.dispatchRecv(r);
    for (let r = 0; r < 2; r++) await session.combineSend(r, new Uint16Array(session.layout.rows * 2));
    await expect(session.combineRecv(0, topkWeights)).rejects.toThrow(
      /rank 0: topkWeights: given to combineRecv, but combineWeights is "expert"/,
    );
    expect(await session.combineRecv(0)).toHaveLength(4);
  });
});
