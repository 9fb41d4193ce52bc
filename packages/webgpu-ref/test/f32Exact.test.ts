import { AMAX_FLOOR, FP8_MAX, f32Bits } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { probeCodec } from "../src/testing/codecProbe.js";
import { divF32, mulF32 } from "./f32Oracle.js";
import { int, rng } from "./helpers.js";

const SEED = 0x5eed;
const FP8_MAX_BITS = f32Bits(FP8_MAX);
const SPECIALS = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x7fbfffff];
const hex = (b: number) => `0x${(b >>> 0).toString(16)}`;

/** Runs a pair kernel of codec_probe.wgsl on (x, y) pairs; the first few differences from `oracle`. */
async function mismatches(
  kernel: "probeF32Div" | "probeF32Mul",
  list: readonly (readonly [number, number])[],
  oracle: (x: number, y: number) => number,
): Promise<string[]> {
  const data = new Uint32Array(list.length * 2);
  list.forEach(([x, y], i) => {
    data[2 * i] = x;
    data[2 * i + 1] = y;
  });
  const got = await probeCodec(kernel, data);
  const bad: string[] = [];
  for (let i = 0; i < list.length && bad.length < 5; i++) {
    const want = oracle(list[i][0], list[i][1]);
    if (got[2 * i] !== want)
      bad.push(`${hex(list[i][0])}, ${hex(list[i][1])}: wgsl ${hex(got[2 * i])}, exact ${hex(want)}`);
  }
  return bad;
}

/** mismatches of 448 / a (the amax scale's reciprocal) for each divisor a, fp32 bits. */
const mismatchesOf448 = (as: readonly number[]) =>
  mismatches(
    "probeF32Div",
    as.map((a) => [FP8_MAX_BITS, a] as const),
    divF32,
  );

/** fp32 bits of sig * 2^(field - 150) for a 24-bit significand sig in [2^23, 2^24) and exponent field 1..254. */
const normal = (sig: number, field: number) => ((field << 23) | (sig & 0x7fffff)) >>> 0;

/**
 * Significands d in [2^23, 2^24) whose quotient 448 / d (any power of two apart) lies within
 * `within` of a midpoint between two fp32 neighbours, in units of the quotient's ulp: the
 * divisions where a quotient a little off rounds the wrong way. A scan of all 2^23 significands.
 */
function nearTieDivisors(within: number): number[] {
  const N = 7 * 2 ** 50; // 448 = 7 * 2^6; N / d in (7 * 2^26, 7 * 2^27]
  const out: number[] = [];
  for (let d = 2 ** 23; d < 2 ** 24; d++) {
    const ulp = N / d < 2 ** 29 ? 32 : 64;
    const unit = d * ulp;
    const rem = N % unit; // exact: every operand is an integer under 2^53
    if (Math.abs(2 * rem - unit) < within * unit) out.push(d);
  }
  return out;
}

describe("WGSL fp32 division (f32_exact.wgsl) is IEEE division, round to nearest even", () => {
  it("the exact oracle agrees with fp32 rounding of the double quotient (53 >= 2 * 24 + 2 bits: one rounding's worth)", () => {
    const rand = rng(SEED + 5);
    const f = new Float32Array(2);
    const u = new Uint32Array(f.buffer);
    for (let i = 0; i < 20_000; i++) {
      u[0] = int(rand, 1, 0x7f7fffff);
      u[1] = int(rand, 1, 0x7f7fffff);
      expect(divF32(u[0], u[1]), `${hex(u[0])} / ${hex(u[1])}`).toBe(f32Bits(f[0] / f[1]));
    }
  });

  it("448 / a for every positive finite bf16 a and the amax floor's neighbourhood", async () => {
    const floor = f32Bits(AMAX_FLOOR);
    const as = [
      ...Array.from({ length: 0x7f7f }, (_, b) => (b + 1) << 16), // subnormal a: 448 / a overflows
      ...Array.from({ length: 2049 }, (_, k) => floor - 1024 + k),
    ];
    expect(await mismatchesOf448(as)).toEqual([]);
  });

  it("448 / a on fp32 boundaries: powers of two and their neighbours, subnormals, the largest finite, overflow", async () => {
    const as: number[] = [];
    for (let k = -149; k <= 127; k++) {
      const p = f32Bits(2 ** k);
      for (let j = -3; j <= 3; j++) if (p + j > 0 && p + j < 0x7f800000) as.push(p + j);
    }
    const edge = f32Bits(FP8_MAX / 3.4028234663852886e38); // smallest a with a finite 448 / a
    for (let j = -8; j <= 8; j++) as.push(edge + j);
    as.push(
      0x7f7fffff,
      0x7f7ffffe,
      0x00800000,
      0x007fffff,
      0x00000001,
      0x00400000,
      FP8_MAX_BITS,
      f32Bits(224),
    );
    expect(await mismatchesOf448(as)).toEqual([]);
  });

  it("448 / a where the exact quotient lies closest to a rounding midpoint", async () => {
    const rand = rng(SEED);
    const ds = nearTieDivisors(2 ** -13);
    expect(ds.length).toBeGreaterThan(500); // the scan finds the hard cases it is meant to
    const as: number[] = [];
    for (const d of ds) {
      for (const field of [int(rand, 1, 254), int(rand, 100, 140)]) as.push(normal(d, field));
    }
    expect(await mismatchesOf448(as)).toEqual([]);
  });

  it(`448 / a for 100,000 random positive finite fp32 a (seed ${SEED})`, async () => {
    const rand = rng(SEED + 1);
    const list = Array.from({ length: 100_000 }, () => [FP8_MAX_BITS, int(rand, 1, 0x7f7fffff)] as const);
    expect(await mismatches("probeF32Div", list, divF32)).toEqual([]);
  });

  it(`n / d for 100,000 random fp32 pairs of any sign and class, and near-midpoint quotients (seed ${SEED})`, async () => {
    const rand = rng(SEED + 2);
    const any = () =>
      rand() < 0.01 ? SPECIALS[int(rand, 0, SPECIALS.length - 1)] : int(rand, 0, 0xffffffff);
    const list: (readonly [number, number])[] = Array.from(
      { length: 100_000 },
      () => [any(), any()] as const,
    );
    // n = d * (2m + 1) / 2^k truncated to 24 bits, and one ulp above: quotients a hair from a midpoint.
    for (let i = 0; i < 20_000; i++) {
      const d = int(rand, 2 ** 23, 2 ** 24 - 1);
      const t = (2 * int(rand, 2 ** 23, 2 ** 24 - 1) + 1) * d; // < 2^49: exact
      const n = Math.floor(t / 2 ** (t.toString(2).length - 24)) + int(rand, 0, 1);
      if (n >= 2 ** 24) continue;
      list.push([normal(n, int(rand, 64, 190)), normal(d, int(rand, 64, 190))]);
    }
    expect(await mismatches("probeF32Div", list, divF32)).toEqual([]);
  });

  it("special operands: NaN, infinities, zeros, as documented", async () => {
    const list = SPECIALS.flatMap((x) => [...SPECIALS, 0x3f800000, 0x00000001].map((y) => [x, y] as const));
    expect(await mismatches("probeF32Div", list, divF32)).toEqual([]);
  });
});

describe("WGSL fp32 multiplication (f32_exact.wgsl) is IEEE multiplication, round to nearest even", () => {
  it("the exact oracle agrees with JavaScript's single rounding of the exact double product", () => {
    const rand = rng(SEED + 3);
    const f = new Float32Array(2);
    const u = new Uint32Array(f.buffer);
    for (let i = 0; i < 20_000; i++) {
      u[0] = int(rand, 0, 0x7f7fffff);
      u[1] = int(rand, 0, 0x7f7fffff);
      expect(mulF32(u[0], u[1]), `${hex(u[0])} * ${hex(u[1])}`).toBe(f32Bits(f[0] * f[1]));
    }
  });

  it(`a * b for random pairs, bf16 x fp32 pairs, exact ties, subnormal and overflowing products (seed ${SEED})`, async () => {
    const rand = rng(SEED + 4);
    const any = () =>
      rand() < 0.01 ? SPECIALS[int(rand, 0, SPECIALS.length - 1)] : int(rand, 0, 0xffffffff);
    const list: (readonly [number, number])[] = [];
    for (let i = 0; i < 60_000; i++) list.push([any(), any()]);
    // bf16 x fp32, as in the amax encode (x * r)
    for (let i = 0; i < 60_000; i++) list.push([int(rand, 0, 0xffff) << 16, any()]);
    // few significant bits: many products exactly halfway between two fp32 values
    for (let i = 0; i < 20_000; i++) {
      const a = (2 ** 23 + int(rand, 0, 2 ** 23 - 1)) & ~(2 ** int(rand, 8, 20) - 1);
      const b = (2 ** 23 + int(rand, 0, 2 ** 23 - 1)) & ~(2 ** int(rand, 8, 20) - 1);
      list.push([normal(a, int(rand, 1, 254)), normal(b, int(rand, 1, 254))]);
    }
    // exponents that put the product at the subnormal range or past the largest finite value
    const clamp = (f: number) => Math.max(1, Math.min(254, f));
    for (let i = 0; i < 20_000; i++) {
      const tiny = rand() < 0.5;
      const fa = tiny ? int(rand, 1, 254) : int(rand, 128, 254);
      const fb = clamp(tiny ? 127 - fa - int(rand, -2, 25) : 381 - fa + int(rand, -2, 2));
      list.push([normal(int(rand, 0, 2 ** 24 - 1), fa), normal(int(rand, 0, 2 ** 24 - 1), fb)]);
    }
    list.push(
      [0x3f800001, 0x3fc00000],
      [0x00000001, 0x3f000000],
      [0x00000003, 0x3f000000],
      [0x7f7fffff, 0x3f800001],
    );
    expect(await mismatches("probeF32Mul", list, mulF32)).toEqual([]);
  });

  it("special operands: NaN, infinities, zeros (Inf * 0 is 0x7fc00000), as documented", async () => {
    const list = SPECIALS.flatMap((x) => [...SPECIALS, 0x3f800000, 0x00000001].map((y) => [x, y] as const));
    expect(await mismatches("probeF32Mul", list, mulF32)).toEqual([]);
  });
});
