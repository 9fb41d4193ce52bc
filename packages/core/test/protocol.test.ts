import { describe, expect, it } from "vitest";
import {
  bf16ToNumber,
  combineToken,
  computeLayout,
  decodeSignal,
  defineConfig,
  encodeBf16,
  encodeSignal,
  numberToBf16,
  ProtocolError,
  partialOf,
  type RankHeap,
  ReferenceSession,
  sumPartials,
} from "../src/index.js";

// Two ranks, four experts each; top-3. Token 0 of rank 0 names experts 1, 2 (both on rank 0) and
// 5 (rank 1): it crosses to rank 0 once with two entries and to rank 1 once with one.
function world(layout: "masked" | "contiguous") {
  const config = defineConfig({ ranks: 2, experts: 8, topK: 3, hidden: 4, maxTokensPerRank: 2, layout });
  const inputs = [
    {
      x: encodeBf16([1, 2, 3, 4, 5, 6, 7, 8]),
      topkIdx: Int32Array.from([1, 2, 5, 7, -1, -1]),
      topkWeights: Float32Array.from([0.5, 0.25, 2, 1, 1, 1]),
    },
    {
      x: encodeBf16([9, 10, 11, 12]),
      topkIdx: Int32Array.from([6, 0, 4]),
      topkWeights: Float32Array.from([1, 1, 1]),
    },
  ];
  return { config, inputs };
}

/** The session's heaps, for looking at what crossed (test-only access to a private field). */
function heaps(s: ReferenceSession): RankHeap[] {
  return (s as unknown as { heaps: RankHeap[] }).heaps;
}

describe("protocol version 2 on the reference backend", () => {
  for (const layout of ["masked", "contiguous"] as const) {
    it(`${layout}: a token crosses to each rank once, with one record listing its slots there`, async () => {
      const { config, inputs } = world(layout);
      const s = new ReferenceSession(config);
      await s.dispatchSend(0, inputs[0]);
      await s.dispatchSend(1, inputs[1]);
      const st = await s.stats(0);
      // rank 0: token 0 -> ranks 0 and 1 once each; token 1 (expert 7) -> rank 1.
      expect(st.dispatchSent?.rows).toEqual([1, 2]);
      const r1 = await s.dispatchRecv(1);
      // rank 1's experts: 5 (token 0 of rank 0, slot 2), 7 (token 1 of rank 0, slot 0), 6 and 4 (rank 1's token).
      expect(Array.from(r1.expertCounts)).toEqual([1, 1, 1, 1]);
      const w = layout === "masked" ? 2 * 2 : 1;
      expect(r1.expertOffsets[1]).toBe(layout === "masked" ? w : 1);
      const routes = heaps(s)[0].i32("dispatchRoutes");
      const W = s.layout.routeWords;
      // Record 0 from rank 0 on rank 0: token 0, two entries (local experts 1 and 2, slots 0 and 1).
      expect(Array.from(routes.subarray(0, 2))).toEqual([0, 2]);
      expect(Array.from(routes.subarray(2, 5))).toEqual([1, 0, 0]);
      expect(Array.from(routes.subarray(6, 9))).toEqual([2, 1, 0]);
      expect(W).toBe(2 + 4 * 3);
      await s.destroy();
    });
  }

  it("contiguous: counts go to every rank before any row, rows wait until every rank's counts are there", async () => {
    const { config, inputs } = world("contiguous");
    const s = new ReferenceSession(config);
    await s.dispatchSend(0, inputs[0]);
    const [h0, h1] = heaps(s);
    const E = config.experts;
    // Rank 0's counts are on both ranks ...
    for (const h of [h0, h1]) {
      const counts = Array.from(h.u32("countSignal").subarray(0, E), (w) => decodeSignal(w)?.count);
      expect(counts).toEqual([0, 1, 1, 0, 0, 1, 0, 1]);
    }
    // ... but no row or record yet: rank 1's counts have not arrived.
    expect(h1.u32("dispatchSignal")[0]).toBe(0);
    expect(h1.elems("recvX").some((v) => v !== 0)).toBe(false);
    await s.dispatchSend(1, inputs[1]);
    expect(decodeSignal(h1.u32("dispatchSignal")[0])?.count).toBe(2);
    await s.destroy();
  });

  it("masked: each expert's rows are packed at the front of its block, by (srcRank, srcToken)", async () => {
    const config = defineConfig({ ranks: 2, experts: 2, topK: 1, hidden: 1, maxTokensPerRank: 2 });
    const s = new ReferenceSession(config);
    await s.dispatchSend(0, {
      x: encodeBf16([1, 2]),
      topkIdx: Int32Array.from([1, 0]),
      topkWeights: Float32Array.from([1, 1]),
    });
    await s.dispatchSend(1, {
      x: encodeBf16([3, 4]),
      topkIdx: Int32Array.from([1, 1]),
      topkWeights: Float32Array.from([1, 1]),
    });
    const r = await s.dispatchRecv(1);
    expect(r.expertCounts[0]).toBe(3);
    expect(Array.from(r.x.subarray(0, 3), bf16ToNumber)).toEqual([1, 3, 4]);
    expect(Array.from(r.meta.subarray(0, 12))).toEqual([0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0]);
    await s.destroy();
  });

  it("combine sums partials per rank, rounded to bf16, then in ascending rank order", () => {
    // Slots 0 and 2 on rank 0, slot 1 on rank 1: (o0 + o2) is one partial, o1 the other.
    const o = [2 ** 20, 1, -(2 ** 20)].map((v) => Uint16Array.of(numberToBf16(v)));
    const y = combineToken(
      1,
      [0, 4, 1],
      [1, 1, 1],
      (e) => (e < 4 ? 0 : 1),
      (k) => o[k],
    );
    // Rank 0's partial is exactly 0, so y = 1; one fp32 pass in slot order would give (2^20 + 1) - 2^20 = 1 too,
    // but a bf16-rounded running sum would lose the 1.
    expect(bf16ToNumber(y[0])).toBe(1);
    const z = combineToken(
      1,
      [0, 1, 4],
      [1, 1, 1],
      (e) => (e < 4 ? 0 : 1),
      (k) => [o[0], o[2], o[1]][k],
    );
    expect(bf16ToNumber(z[0])).toBe(1);
  });

  it("a partial sums its entries in slot order: with three on one rank the order changes bits", () => {
    // Slots 0, 1, 2 on rank 0: (2^40 + -2^40) + 1 = 1 in slot order; reversed, 1 is lost against 2^40.
    const o = [2 ** 40, -(2 ** 40), 1].map((v) => Uint16Array.of(numberToBf16(v)));
    const y = combineToken(
      1,
      [0, 1, 2],
      [1, 1, 1],
      () => 0,
      (k) => o[k],
    );
    expect(bf16ToNumber(y[0])).toBe(1);
    const reversed = combineToken(
      1,
      [0, 1, 2],
      [1, 1, 1],
      () => 0,
      (k) => o[2 - k],
    );
    expect(bf16ToNumber(reversed[0])).toBe(0);
  });

  it("both sums start at +0: y is +0 where every partial is -0, where partials cancel, and without slots", () => {
    const rankOf = (e: number) => (e < 4 ? 0 : 1);
    const tiny = Uint16Array.of(numberToBf16(-(2 ** -133)));
    // w * o = -2^-135 on each rank: each partial rounds to -0 (0x8000), y is +0 (0x0000).
    expect(partialOf(1, [{ w: 0.25, o: tiny }])[0]).toBe(0x8000);
    expect(combineToken(1, [0, 4], [0.25, 0.25], rankOf, () => tiny)[0]).toBe(0x0000);
    expect(sumPartials(1, [Uint16Array.of(0x8000), Uint16Array.of(0x8000)])[0]).toBe(0x0000);
    // Products that are all -0 give a +0 partial; partials +1.5 and -1.5 cancel to +0.
    expect(
      partialOf(1, [
        { w: -1, o: Uint16Array.of(0) },
        { w: 1, o: Uint16Array.of(0x8000) },
      ])[0],
    ).toBe(0x0000);
    const cancel = [1.5, -1.5].map((v) => Uint16Array.of(numberToBf16(v)));
    expect(combineToken(1, [0, 4], [1, 1], rankOf, (k) => cancel[k])[0]).toBe(0x0000);
    expect(combineToken(1, [-1, -1], [1, 1], rankOf, () => tiny)[0]).toBe(0x0000);
  });

  it("a record that names an expert index twice is a ProtocolError naming the peer", async () => {
    const { config, inputs } = world("masked");
    const s = new ReferenceSession(config);
    await s.dispatchSend(0, inputs[0]);
    await s.dispatchSend(1, inputs[1]);
    const routes = heaps(s)[1].i32("dispatchRoutes");
    const W = s.layout.routeWords;
    // Rank 0's record 1 on rank 1 (token 1 -> local expert 3) now claims local expert 1 index 0, already taken.
    routes.set([1, 0, 0], W + 2);
    const err = await s.dispatchRecv(1).catch((e) => e);
    expect(err).toBeInstanceOf(ProtocolError);
    expect(String(err.message)).toMatch(/rank 0/);
    await s.destroy();
  });

  it("refuses a maxTokensPerRank past the 21-bit signal count, saying the limit", () => {
    expect(() =>
      defineConfig({ ranks: 1, experts: 1, topK: 1, hidden: 1, maxTokensPerRank: 2 ** 21 }),
    ).toThrow(/at most 2097150: a signal word carries a count in 21 bits/);
    expect(
      computeLayout(defineConfig({ ranks: 1, experts: 1, topK: 1, hidden: 1, maxTokensPerRank: 2 ** 21 - 2 }))
        .rows,
    ).toBe(2 ** 21 - 2);
    expect(encodeSignal(1, 2 ** 21 - 2) >>> 21).toBe(1);
  });
});
