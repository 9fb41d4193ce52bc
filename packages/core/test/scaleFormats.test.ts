import { describe, expect, it } from "vitest";
import {
  AMAX_FLOOR,
  ConfigError,
  defineConfig,
  dequantizeRows,
  type EpConfigInput,
  FP8_MAX_INV,
  f32Bits,
  InputError,
  numberToBf16,
  packUe8m0Scales,
  quantizeRows,
  referenceBackend,
  scaleExponent,
  unpackUe8m0Scales,
  validateRankInput,
} from "../src/index.js";

/** One block of 128 bf16 values: `head` first, zeros after. */
function block(head: number[]): Uint16Array {
  const x = new Uint16Array(128);
  head.forEach((b, i) => {
    x[i] = b;
  });
  return x;
}
const bf = numberToBf16;
const hex = (v: number) => `0x${f32Bits(v).toString(16)}`;
const head = (q: Uint8Array, n: number) => [...q.slice(0, n)];

describe("amax scale format", () => {
  it("has the documented constants", () => {
    expect(hex(FP8_MAX_INV)).toBe("0x3b124925");
    expect(hex(AMAX_FLOOR)).toBe("0x38d1b717");
  });

  it("floors an all-zero block's amax at fl32(1e-4), keeping signs of zero", () => {
    const { q, scales } = quantizeRows(block([0x8000]), 128, "amax");
    expect(hex(scales[0])).toBe("0x346facad"); // fl32(fl32(1e-4) * fl32(1/448))
    expect(head(q, 2)).toEqual([0x80, 0x00]);
  });

  it("multiplies by fl32(448 / amax) and rounds the product to fp32, then to e4m3", () => {
    // amax 3: r = fl32(448/3) = 149.33333; 3 * r = 447.99998 -> 448; 1 * r -> 144; -0.001 -> -0.15625
    const { q, scales } = quantizeRows(block([bf(3), bf(1), bf(-0.001)]), 128, "amax");
    expect(hex(scales[0])).toBe("0x3bdb6db8"); // fl32(3 * fl32(1/448))
    expect(head(q, 3)).toEqual([0x7e, 0x71, 0xa2]);
  });

  it("gives scale 1 to a block whose amax is 448, and 2 * fl32(1/448) to amax 2 (a power of two)", () => {
    expect(hex(quantizeRows(block([bf(448), bf(1)]), 128, "amax").scales[0])).toBe("0x3f800000");
    const two = quantizeRows(block([bf(2), bf(-2)]), 128, "amax");
    expect(hex(two.scales[0])).toBe("0x3b924925");
    expect(head(two.q, 2)).toEqual([0x7e, 0xfe]);
  });

  it("skips NaN and infinities in amax; infinities saturate, NaN keeps its sign", () => {
    const { q, scales } = quantizeRows(block([0x7f80, 0xff80, 0xffc0, 0x7fc0, bf(2)]), 128, "amax");
    expect(hex(scales[0])).toBe("0x3b924925");
    expect(head(q, 5)).toEqual([0x7e, 0xfe, 0xff, 0x7f, 0x7e]);
  });

  it("quantises values below the floor against the floor; bf16 subnormals become signed zeros", () => {
    const { q, scales } = quantizeRows(block([0x0001, 0x8001, bf(1e-5)]), 128, "amax");
    expect(hex(scales[0])).toBe("0x346facad");
    expect(head(q, 3)).toEqual([0x00, 0x80, 0x63]); // 1.00136e-5 * 4480000 = 44.86 -> 44
  });

  it("dequantises as fl32(e4m3 value * scale)", () => {
    const { q, scales } = quantizeRows(block([bf(3)]), 128, "amax");
    expect(dequantizeRows(q, scales, 128)[0]).toBe(Math.fround(448 * scales[0]));
  });
});

describe("ue8m0 scale format", () => {
  it("quantises exactly as pow2", () => {
    const x = new Uint16Array(512).map((_, i) => (i * 7919) & 0xffff);
    expect(quantizeRows(x, 256, "ue8m0")).toEqual(quantizeRows(x, 256, "pow2"));
  });

  it("packs four biased exponents per int32, low byte first, padding with 0", () => {
    const scales = Float32Array.from([1, 2, 0.5, 2 ** -126, 2 ** 119, 1, 1, 1, 1, 2 ** -127]);
    const packed = packUe8m0Scales(scales, 5);
    expect([...packed].map((w) => (w >>> 0).toString(16))).toEqual(["17e807f", "f6", "7f7f7f7f", "0"]);
    expect(unpackUe8m0Scales(packed, 5)).toEqual(scales);
  });

  it("refuses to pack a scale that is not a power of two in range", () => {
    expect(() => packUe8m0Scales(Float32Array.from([3]), 1)).toThrow(/scale \[0, 0\] = 3 is not 2\^k/);
    expect(() => packUe8m0Scales(Float32Array.from([0]), 1)).toThrow(RangeError);
  });

  it("pow2's exponent is DeepEP's round_scale exponent for every bf16 amax at or above its floor", () => {
    // DeepEP: ceil(log2(fl32(amax * fl32(1/448)))) read off the fp32 bits (exponent, +1 if any mantissa).
    for (let b = 0; b < 0x7f80; b++) {
      const amax = new Float32Array(new Uint32Array([b << 16]).buffer)[0];
      if (amax < AMAX_FLOOR) continue;
      const bits = f32Bits(Math.fround(amax * FP8_MAX_INV));
      const deepEp = ((bits >>> 23) & 0xff) - 127 + ((bits & 0x7fffff) !== 0 ? 1 : 0);
      if (scaleExponent(amax) !== deepEp) throw new Error(`amax bits 0x${b.toString(16)}`);
    }
  });
});

const fp8: EpConfigInput = {
  ranks: 2,
  experts: 4,
  topK: 2,
  hidden: 256,
  maxTokensPerRank: 2,
  dispatchDtype: "fp8-e4m3",
};

describe("scaleFormat in configs", () => {
  it("is left out by default and accepted for fp8 dispatch", () => {
    expect("scaleFormat" in defineConfig(fp8)).toBe(false);
    for (const f of ["pow2", "amax", "ue8m0"] as const)
      expect(defineConfig({ ...fp8, scaleFormat: f }).scaleFormat).toBe(f);
  });

  it("refuses an unknown format and any format without fp8 dispatch, saying what to do", () => {
    expect(() => defineConfig({ ...fp8, scaleFormat: "e8m0" as "pow2" })).toThrow(ConfigError);
    expect(() => defineConfig({ ...fp8, scaleFormat: "e8m0" as "pow2" })).toThrow(/one of pow2, amax, ue8m0/);
    expect(() => defineConfig({ ...fp8, dispatchDtype: "bf16", scaleFormat: "pow2" })).toThrow(
      /EpConfig.scaleFormat = "pow2": applies only to fp8-e4m3 dispatch.*leave scaleFormat out/,
    );
  });

  it("ue8m0 fp8 input refuses scales that are not powers of two", () => {
    const c = defineConfig({ ...fp8, inputDtype: "fp8-e4m3", scaleFormat: "ue8m0" });
    const input = (s: number) => ({
      x: new Uint8Array(256),
      scales: Float32Array.from([1, s]),
      topkIdx: Int32Array.from([0, 1]),
      topkWeights: Float32Array.from([0.5, 0.5]),
    });
    expect(validateRankInput(c, 0, input(2 ** -127))).toBe(1);
    expect(() => validateRankInput(c, 0, input(3))).toThrow(InputError);
    expect(() => validateRankInput(c, 0, input(3))).toThrow(/scales: \[0\]\[1\] = 3 is not 2\^k/);
  });

  it("the reference backend quantises in the config's format", async () => {
    const c = defineConfig({ ...fp8, ranks: 1, experts: 2, topK: 1, scaleFormat: "amax" });
    const x = new Uint16Array(256).map((_, i) => bf(i - 100));
    const s = await referenceBackend.createSession(c);
    await s.dispatchSend(0, { x, topkIdx: Int32Array.from([0]), topkWeights: Float32Array.from([1]) });
    const got = await s.dispatchRecv(0);
    const want = quantizeRows(x, 256, "amax");
    expect(got.x.slice(0, 256)).toEqual(want.q);
    expect(got.scales?.slice(0, 2)).toEqual(want.scales);
    await s.destroy();
  });
});
