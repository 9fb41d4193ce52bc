import { bf16ToNumber, FP8_BLOCK, FP8_MAX, MIN_SCALE_EXP, scaleExponent } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { fillBf16, fillFp8, fillScales } from "../src/generators/payload.js";
import { FP8_PAYLOADS } from "../src/generators/world.js";
import { Rng } from "../src/harness/rng.js";

/** Which boundary of the block-scale rule a block's largest magnitude is on, or null. */
function boundary(amax: number): string | null {
  const s = scaleExponent(amax);
  if (amax === FP8_MAX * 2 ** s) return s === MIN_SCALE_EXP ? "floor" : "448*2^s";
  if (amax > 0 && 2 ** Math.round(Math.log2(amax)) === amax) return "power of two";
  if (amax <= FP8_MAX * 2 ** MIN_SCALE_EXP) return "floor";
  // one bf16 step off 448 * 2^s: 448 * 2^s * (1 +- 2^-7 / 1.75)
  const near = FP8_MAX * 2 ** Math.round(Math.log2(amax / FP8_MAX));
  return Math.abs(amax - near) <= near * 2 ** -7 ? "next to 448*2^s" : null;
}

describe("payload style edges", () => {
  it("puts every block's largest magnitude on a boundary of the block-scale rule, each kind often", () => {
    const x = fillBf16(FP8_BLOCK * 4000, "edges", new Rng(7));
    const kinds = new Map<string, number>();
    let nonFinite = 0;
    for (let b = 0; b < x.length / FP8_BLOCK; b++) {
      let amax = 0;
      for (let i = b * FP8_BLOCK; i < (b + 1) * FP8_BLOCK; i++) {
        const v = bf16ToNumber(x[i]);
        if (!Number.isFinite(v)) nonFinite++;
        amax = Math.max(amax, Math.abs(v));
      }
      const kind = boundary(amax) ?? `off the boundaries (block ${b}, amax ${amax})`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    expect(nonFinite).toBe(0);
    expect([...kinds.keys()].sort()).toEqual(["448*2^s", "floor", "next to 448*2^s", "power of two"]);
    for (const k of ["power of two", "448*2^s", "next to 448*2^s", "floor"])
      expect(kinds.get(k)).toBeGreaterThan(300);
  });

  it("gives fp8 codes without NaN and finite positive scales for fp8 input", () => {
    const rng = new Rng(3);
    const q = fillFp8(10_000, "edges", rng);
    expect(q.some((v) => (v & 0x7f) === 0x7f)).toBe(false);
    expect(q.filter((v) => v === 0x7e || v === 0xfe).length).toBeGreaterThan(100);
    const s = fillScales(1000, "edges", rng);
    expect(s.every((v) => Number.isFinite(v) && v > 0)).toBe(true);
    expect(s.includes(2 ** -126)).toBe(true);
  });

  it("is one of the fp8 properties' three styles (a third of their steps)", () => {
    expect(FP8_PAYLOADS).toEqual(["wide", "special", "edges"]);
  });
});
