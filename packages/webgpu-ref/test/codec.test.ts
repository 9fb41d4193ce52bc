import { bf16ToNumber, decodeFp8, encodeFp8, f32Bits, numberToBf16, scaleExponent } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { probeCodec } from "../src/testing/codecProbe.js";

const S_BIAS = 200;

/** Core's quantise rule for one bf16 value and scale 2^s: encodeFp8, with a NaN's sign from its bits. */
function coreQuantize(b: number, s: number): number {
  const nanSign = (b & 0x7fff) > 0x7f80 ? (b >>> 8) & 0x80 : 0;
  return encodeFp8(bf16ToNumber(b) / 2 ** s) | nanSign;
}

/** Every bf16 bit pattern with scale exponent s, packed as codec_probe.wgsl's fp8_encode expects. */
function allBf16(s: number): Uint32Array {
  return Uint32Array.from({ length: 0x10000 }, (_, b) => b | ((s + S_BIAS) << 16));
}

describe("WGSL fp8 e4m3 encode (quantise-on-dispatch) is bit-exact with core", () => {
  // s = 0 sees every subnormal, tie and saturation edge of e4m3 directly; the others shift every
  // bf16 value through the scale, down to the smallest scale 2^-126 and up past the largest.
  for (const s of [0, -126, -125, -20, -9, -6, -1, 1, 3, 8, 9, 40, 120, 127]) {
    it(`on all 65536 bf16 values divided by 2^${s}`, async () => {
      const got = await probeCodec("probeFp8Encode", allBf16(s));
      const bad: string[] = [];
      for (let b = 0; b < 0x10000 && bad.length < 5; b++) {
        const want = coreQuantize(b, s);
        if (got[b] !== want)
          bad.push(`bf16 0x${b.toString(16)}: wgsl 0x${got[b].toString(16)}, core 0x${want.toString(16)}`);
      }
      expect(bad).toEqual([]);
    });
  }

  it.each([
    ["+0", 0x0000, 0x00],
    ["-0", 0x8000, 0x80],
    ["NaN", 0x7fc1, 0x7f],
    ["-NaN keeps its sign", 0xffc0, 0xff],
    ["+Inf saturates", 0x7f80, 0x7e],
    ["-Inf saturates", 0xff80, 0xfe],
    ["448", numberToBf16(448), 0x7e],
    ["464 (tie between 448 and 480) saturates", numberToBf16(464), 0x7e],
    ["smallest subnormal 2^-9", numberToBf16(2 ** -9), 0x01],
    ["half the smallest subnormal: tie to 0", numberToBf16(2 ** -10), 0x00],
    ["1.5 x smallest subnormal: tie to even 2", numberToBf16(3 * 2 ** -10), 0x02],
    ["largest subnormal rounds into the smallest normal", numberToBf16(7.5 * 2 ** -9), 0x08],
    ["1 + 1/16: tie to even 1", numberToBf16(1 + 1 / 16), 0x38],
    ["1 + 3/16: tie to even 1.25", numberToBf16(1 + 3 / 16), 0x3a],
  ])("%s", async (_, bits, code) => {
    const [got] = await probeCodec("probeFp8Encode", Uint32Array.of(bits | (S_BIAS << 16)));
    expect(got).toBe(code);
    expect(coreQuantize(bits, 0)).toBe(code);
  });
});

describe("WGSL fp8 decode and block scales are bit-exact with core", () => {
  it("decodes all 256 e4m3 codes", async () => {
    const got = await probeCodec(
      "probeFp8Decode",
      Uint32Array.from({ length: 256 }, (_, q) => q),
    );
    for (let q = 0; q < 256; q++) {
      const want = decodeFp8(q);
      if (Number.isNaN(want)) expect(got[q]).toBe(0x7fc00000);
      else expect(got[q], `code 0x${q.toString(16)}`).toBe(f32Bits(want));
    }
  });

  it("picks core's scale exponent for every finite bf16 amax", async () => {
    const amax = Uint32Array.from({ length: 0x7f80 }, (_, m) => m);
    const got = await probeCodec("probeScaleExp", amax);
    for (let m = 0; m < 0x7f80; m++) {
      // (core returns -0 for some blocks; the exponent is the same)
      expect(got[m] - S_BIAS, `amax bits 0x${m.toString(16)}`).toBe(scaleExponent(bf16ToNumber(m)) + 0);
    }
  });
});

describe("WGSL fp32 -> bf16 rounding is bit-exact with core", () => {
  it("on edge cases and a sweep of fp32 bit patterns", async () => {
    const edges = [
      0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f7fffff, 0x3f808000, 0x3f818000,
    ];
    const sweep = Array.from({ length: 1 << 18 }, (_, i) => Math.imul(i, 0x9e3779b1) >>> 0);
    const values = Uint32Array.from([...edges, ...sweep]);
    const got = await probeCodec("probeBf16Round", values);
    const f = new Float32Array(values.buffer);
    const bad: string[] = [];
    for (let i = 0; i < values.length && bad.length < 5; i++) {
      const want = numberToBf16(f[i]);
      const ok = Number.isNaN(f[i])
        ? (got[i] & 0x7fc0) === 0x7fc0 && (got[i] & 0x8000) === (want & 0x8000)
        : got[i] === want;
      if (!ok)
        bad.push(
          `fp32 0x${values[i].toString(16)}: wgsl 0x${got[i].toString(16)}, core 0x${want.toString(16)}`,
        );
    }
    expect(bad).toEqual([]);
  });
});
