import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  computeLayout,
  defineConfig,
  deliveredRows,
  dtypeBytes,
  type EpConfig,
  layoutParams,
  PARAM_INDEX,
  PARAM_NAMES,
  REGION_ALIGN,
  REGION_DTYPE_BYTES,
  REGION_NAMES,
  ReferenceSession,
} from "../src/index.js";

const configArb = fc
  .record({
    ranks: fc.integer({ min: 1, max: 8 }),
    dpLog: fc.integer({ min: 0, max: 3 }),
    localExperts: fc.integer({ min: 1, max: 6 }),
    topK: fc.integer({ min: 1, max: 9 }),
    blocks: fc.integer({ min: 1, max: 4 }),
    extra: fc.integer({ min: 0, max: 100 }),
    maxTokensPerRank: fc.integer({ min: 1, max: 40 }),
    fp8: fc.boolean(),
    fp8Input: fc.boolean(),
    layout: fc.constantFrom("masked" as const, "contiguous" as const),
    expertAlignment: fc.constantFrom(1, 4, 16, 128),
  })
  .map((r): EpConfig => {
    const experts = r.ranks * r.localExperts;
    const divisors = [1, 2, 4, 8].filter((d) => d <= r.ranks && r.ranks % d === 0);
    const dpSize = divisors[r.dpLog % divisors.length];
    return defineConfig({
      ranks: r.ranks,
      dpSize,
      experts,
      topK: Math.min(r.topK, experts),
      hidden: r.fp8 ? r.blocks * 128 : r.blocks * 128 + r.extra,
      maxTokensPerRank: r.maxTokensPerRank,
      inputDtype: r.fp8 && r.fp8Input ? "fp8-e4m3" : "bf16",
      dispatchDtype: r.fp8 ? "fp8-e4m3" : "bf16",
      layout: r.layout,
      expertAlignment: r.expertAlignment,
    });
  });

describe("computeLayout", () => {
  it("places regions aligned, without overlap, with bytes = product(shape) * dtype size", () => {
    fc.assert(
      fc.property(configArb, (config) => {
        const layout = computeLayout(config);
        for (const heap of [true, false]) {
          const regions = Object.values(layout.regions)
            .filter((r) => r.bytes > 0 && r.symmetric === heap)
            .sort((a, b) => a.offset - b.offset);
          let end = 0;
          for (const r of regions) {
            expect(r.offset % REGION_ALIGN).toBe(0);
            expect(r.offset).toBeGreaterThanOrEqual(end);
            expect(r.bytes).toBe(r.shape.reduce((a, b) => a * b, 1) * REGION_DTYPE_BYTES[r.dtype]);
            end = r.offset + r.bytes;
          }
          expect(heap ? layout.symmetricBytes : layout.localBytes).toBeGreaterThanOrEqual(end);
        }
        expect(layout.bytesPerRank).toBe(layout.symmetricBytes + layout.localBytes);
      }),
    );
  });

  it("matches the documented size formulas", () => {
    fc.assert(
      fc.property(configArb, (c) => {
        const l = computeLayout(c);
        const R = c.ranks;
        const L = c.experts / R;
        const E = c.experts;
        const M = c.maxTokensPerRank;
        const H = c.hidden;
        const K = c.topK;
        const D = dtypeBytes(c.dispatchDtype);
        const S = c.dispatchDtype === "fp8-e4m3" ? H / 128 : 0;
        const J = Math.min(K, L);
        const W = 2 + 4 * J;
        const N = R * M * J + L * (c.expertAlignment - 1);
        const bytes = (name: (typeof REGION_NAMES)[number]) => l.regions[name].bytes;
        expect(l.slotsPerRank).toBe(J);
        expect(l.routeWords).toBe(W);
        expect(l.rowsPerSource).toBe(M * J);
        expect(bytes("combineSignal")).toBe(4 * R);
        expect(bytes("combineX")).toBe(2 * R * M * H);
        expect(bytes("dispatchSignal")).toBe(4 * R);
        expect(bytes("dispatchRoutes")).toBe(4 * R * M * W);
        expect(l.regions.recvMeta.symmetric).toBe(false);
        if (c.layout === "masked") {
          expect(l.rows).toBe(L * R * M);
          expect(bytes("countSignal")).toBe(4 * R * L);
          expect(bytes("dispatchX")).toBe(R * M * H * D);
          expect(bytes("dispatchScales")).toBe(4 * R * M * S);
          expect(bytes("recvX")).toBe(L * R * M * H * D);
          expect(bytes("recvScales")).toBe(4 * L * R * M * S);
          expect(bytes("recvMeta")).toBe(16 * L * R * M);
          expect(l.regions.recvX.symmetric).toBe(false);
        } else {
          expect(l.rows).toBe(N);
          expect(bytes("countSignal")).toBe(4 * R * E);
          expect(bytes("dispatchX")).toBe(0);
          expect(bytes("dispatchScales")).toBe(0);
          expect(bytes("recvX")).toBe(N * H * D);
          expect(bytes("recvScales")).toBe(4 * N * S);
          expect(bytes("recvMeta")).toBe(16 * N);
          expect(l.regions.recvX.symmetric).toBe(true);
        }
      }),
    );
  });

  it("sizes the DeepSeek-like contiguous layout at 4096 tokens under 1.25 GiB per rank (no staging)", () => {
    const prefill = defineConfig({
      ranks: 4,
      experts: 256,
      topK: 8,
      hidden: 7168,
      maxTokensPerRank: 4096,
      layout: "contiguous",
      dispatchDtype: "fp8-e4m3",
    });
    const l = computeLayout(prefill);
    expect(l.bytesPerRank).toBeLessThan(1.25 * 2 ** 30);
    expect(l.regions.dispatchX.bytes).toBe(0);
  });

  it("fits the worst case: every token of every rank routed to the same experts", async () => {
    await fc.assert(
      fc.asyncProperty(configArb, async (config) => {
        const c: EpConfig = {
          ...config,
          hidden: config.dispatchDtype === "fp8-e4m3" ? 128 : 3,
          inputDtype: "bf16",
        };
        const session = new ReferenceSession(c);
        const L = c.experts / c.ranks;
        const K = c.topK;
        const T = c.maxTokensPerRank;
        // Slots 0..min(K, L)-1 all name experts of rank 0 (the most one rank can receive); the rest go elsewhere.
        const idx = new Int32Array(T * K).map((_, i) => (i % K) % c.experts);
        const input = {
          x: new Uint16Array(T * c.hidden).fill(0x3f80),
          topkIdx: idx,
          topkWeights: new Float32Array(T * K).fill(1),
        };
        for (let r = 0; r < c.ranks; r++) await session.dispatchSend(r, input);
        const result = await session.dispatchRecv(0);
        const rows = deliveredRows(c, result);
        const perSource = Array.from({ length: c.ranks }, (_, s) =>
          Math.max(0, Math.floor((T - 1 - (s % c.dpSize)) / c.dpSize) + 1),
        );
        const expected = perSource.reduce((a, b) => a + b, 0) * Math.min(K, L);
        expect(rows.length).toBe(expected);
        // Every (local expert, source) region holds all of that source's tokens for experts 0..min(K, L)-1.
        for (let e = 0; e < L; e++)
          for (let s = 0; s < c.ranks; s++)
            expect(result.sourceCounts[e * c.ranks + s]).toBe(e < Math.min(K, L) ? perSource[s] : 0);
        for (const { row } of rows) expect(row).toBeLessThan(computeLayout(c).rows);
      }),
      { numRuns: 40 },
    );
  });
});

describe("layoutParams", () => {
  it("lists scalars then (offset, bytes) of every region in the documented order", () => {
    const config = defineConfig({
      ranks: 2,
      experts: 4,
      topK: 2,
      hidden: 256,
      maxTokensPerRank: 4,
      dispatchDtype: "fp8-e4m3",
    });
    const layout = computeLayout(config);
    const p = layoutParams(layout);
    expect(p.length).toBe(PARAM_NAMES.length);
    expect(p[PARAM_INDEX.ranks]).toBe(2);
    expect(p[PARAM_INDEX.localExperts]).toBe(2);
    expect(p[PARAM_INDEX.scalesPerRow]).toBe(2);
    expect(p[PARAM_INDEX.quantize]).toBe(1);
    for (const name of REGION_NAMES) {
      expect(p[PARAM_INDEX[`${name}.offset`]]).toBe(layout.regions[name].offset);
      expect(p[PARAM_INDEX[`${name}.bytes`]]).toBe(layout.regions[name].bytes);
    }
  });

  it("sizes the DeepSeek-like masked layout under 400 MB per rank", () => {
    const config = defineConfig({
      ranks: 4,
      experts: 256,
      topK: 8,
      hidden: 7168,
      maxTokensPerRank: 128,
      dispatchDtype: "fp8-e4m3",
    });
    expect(computeLayout(config).bytesPerRank).toBeLessThan(400e6);
  });
});
