import { describe, expect, it } from "vitest";
import {
  bf16ToNumber,
  decodeFp8,
  dequantizeRows,
  encodeFp8,
  numberToBf16,
  quantizeRows,
  scaleExponent,
} from "../src/index.js";

describe("bf16", () => {
  it.each([
    [1, 0x3f80],
    [-2, 0xc000],
    [0, 0x0000],
    [-0, 0x8000],
    [Number.POSITIVE_INFINITY, 0x7f80],
    [Number.NEGATIVE_INFINITY, 0xff80],
    [Number.NaN, 0x7fc0],
    [1 + 2 ** -8, 0x3f80], // tie between 0x3f80 and 0x3f81: even wins
    [1 + 3 * 2 ** -8, 0x3f82], // tie between 0x3f81 and 0x3f82: even wins
    [1 + 2 ** -8 + 2 ** -20, 0x3f81], // just above the tie
    [2 ** -133, 0x0001], // smallest bf16 subnormal
    [3.3895313892515355e38, 0x7f7f], // largest finite bf16
    [(1 + 255 / 256) * 2 ** 127, 0x7f80], // tie above the largest finite: even (infinity)
    [(1 + 254.9 / 256) * 2 ** 127, 0x7f7f], // just below that tie
  ])("encodes %d as %s", (value, bits) => {
    expect(numberToBf16(value)).toBe(bits);
  });

  it("round-trips every non-NaN bit pattern", () => {
    for (let b = 0; b < 0x10000; b++) {
      const v = bf16ToNumber(b);
      if (Number.isNaN(v)) {
        expect(numberToBf16(v) & 0x7fc0).toBe(0x7fc0);
        continue;
      }
      expect(numberToBf16(v)).toBe(b);
    }
  });
});

describe("fp8 e4m3", () => {
  it.each([
    [0, 0x00],
    [-0, 0x80],
    [2 ** -9, 0x01], // smallest subnormal
    [7 * 2 ** -9, 0x07], // largest subnormal
    [2 ** -6, 0x08], // smallest normal
    [2 ** -10, 0x00], // half the smallest subnormal: tie to even (0)
    [3 * 2 ** -10, 0x02], // 1.5 subnormal steps: tie to even (2)
    [2 ** -10 + 2 ** -20, 0x01], // just above the tie
    [1, 0x38],
    [1.0625, 0x38], // 1 + 1/16: tie between 1 and 1.125, even (1)
    [1.1875, 0x3a], // 1.125 + 1/16: tie, even mantissa (1.25)
    [448, 0x7e],
    [449, 0x7e], // saturates
    [464, 0x7e], // would round to 480: saturates
    [1e9, 0x7e],
    [Number.POSITIVE_INFINITY, 0x7e],
    [Number.NEGATIVE_INFINITY, 0xfe],
    [-448, 0xfe],
    [Number.NaN, 0x7f],
  ])("encodes %d as %s", (value, bits) => {
    expect(encodeFp8(value)).toBe(bits);
  });

  it("decodes every code and round-trips every finite one", () => {
    for (let b = 0; b < 256; b++) {
      const v = decodeFp8(b);
      if ((b & 0x7f) === 0x7f) {
        expect(Number.isNaN(v)).toBe(true);
        continue;
      }
      expect(encodeFp8(v)).toBe(b);
    }
    expect(decodeFp8(0x7e)).toBe(448);
    expect(decodeFp8(0x01)).toBe(2 ** -9);
  });

  it("rounds every midpoint between neighbours to the even code", () => {
    for (let b = 0; b < 0x7e; b++) {
      const mid = (decodeFp8(b) + decodeFp8(b + 1)) / 2;
      const even = b % 2 === 0 ? b : b + 1;
      expect(encodeFp8(mid)).toBe(even);
      expect(encodeFp8(-mid)).toBe(even | 0x80);
    }
  });
});

describe("block scales", () => {
  it.each([
    [0, -126],
    [448, 0],
    [448.5, 1],
    [896, 1],
    [224, -1],
    [1, -8], // 1 <= 448 * 2^-8 = 1.75
    [1.75, -8],
    [1.76, -7],
    [2 ** -140, -126], // clamped to the smallest normal scale
  ])("amax %d -> exponent %d", (amax, s) => {
    expect(scaleExponent(amax)).toBe(s);
  });

  it("quantises a row by the written rule and dequantises within the e4m3 step", () => {
    const values = Array.from({ length: 256 }, (_, i) => (i < 128 ? Math.sin(i) * 3 : (i - 128) * 1e-3));
    values[5] = Number.NaN;
    values[6] = Number.POSITIVE_INFINITY;
    values[200] = -0;
    const bits = Uint16Array.from(values, numberToBf16);
    const { q, scales } = quantizeRows(bits, 256);
    let amax0 = 0;
    for (let i = 0; i < 128; i++) {
      const v = Math.abs(bf16ToNumber(bits[i]));
      if (Number.isFinite(v)) amax0 = Math.max(amax0, v);
    }
    expect(scales[0]).toBe(2 ** scaleExponent(amax0));
    expect(q[5]).toBe(0x7f);
    expect(q[6]).toBe(0x7e);
    expect(q[200]).toBe(0x80);
    const back = dequantizeRows(q, scales, 256);
    for (let i = 0; i < 256; i++) {
      const x = bf16ToNumber(bits[i]);
      if (!Number.isFinite(x)) continue;
      const block = i < 128 ? 0 : 1;
      const err = Math.abs(back[i] - x);
      expect(err).toBeLessThanOrEqual(Math.abs(x) * 2 ** -4 + scales[block] * 2 ** -10);
    }
  });
});

describe("fp8 NaN sign", () => {
  it("keeps the sign of a bf16 NaN when quantising", () => {
    const row = new Uint16Array(128).fill(0x3f80);
    row[0] = 0x7fc0;
    row[1] = 0xffc0;
    const { q } = quantizeRows(row, 128);
    expect([q[0], q[1]]).toEqual([0x7f, 0xff]);
  });
});
