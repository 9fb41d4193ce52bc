import { AMAX_FLOOR, bf16ToNumber, FP8_MAX, f32Bits, numberToBf16, quantizeRows } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { probeCodec } from "../src/testing/codecProbe.js";
import { divF32 } from "./f32Oracle.js";
import { int, rng } from "./helpers.js";

const SEED = 0xa3a3;
const hex = (b: number) => `0x${(b >>> 0).toString(16)}`;

/** The amax format's (scale, reciprocal) fp32 bits per block from the WGSL, given each block's amax magnitude bits. */
async function wgslScales(amax: readonly number[]): Promise<{ scale: number[]; recip: number[] }> {
  const data = new Uint32Array(amax.length * 2);
  amax.forEach((m, i) => {
    data[2 * i] = m;
  });
  const got = await probeCodec("probeAmaxScale", data);
  return {
    scale: amax.map((_, i) => got[2 * i]),
    recip: amax.map((_, i) => got[2 * i + 1]),
  };
}

/** The largest finite bf16 magnitude (bits & 0x7fff) of x[start, start + 128), 0 if none. */
function blockAmax(x: Uint16Array, start: number): number {
  let m = 0;
  for (let i = start; i < start + 128; i++) if ((x[i] & 0x7fff) < 0x7f80) m = Math.max(m, x[i] & 0x7fff);
  return m;
}

describe("WGSL amax block scales (fp8.wgsl with f32_exact.wgsl) are bit-exact with core's quantizeRows", () => {
  it("scale fl32(a * fl32(1/448)) and reciprocal fl32(448 / a) for every finite bf16 amax", async () => {
    const amax = Array.from({ length: 0x7f80 }, (_, m) => m);
    const { scale, recip } = await wgslScales(amax);
    // core's scale: a block whose only nonzero element is the amax
    const x = new Uint16Array(amax.length * 128);
    amax.forEach((m, b) => {
      x[b * 128] = m;
    });
    const want = new Uint32Array(quantizeRows(x, 128, "amax").scales.buffer);
    const bad: string[] = [];
    for (let m = 0; m < amax.length && bad.length < 5; m++) {
      const a = Math.max(bf16ToNumber(m), AMAX_FLOOR);
      const r = f32Bits(Math.fround(FP8_MAX / a)); // core's expression for the reciprocal
      if (scale[m] !== want[m] || recip[m] !== r || r !== divF32(f32Bits(FP8_MAX), f32Bits(a)))
        bad.push(
          `amax bits ${hex(m)}: wgsl scale ${hex(scale[m])} r ${hex(recip[m])}, core scale ${hex(want[m])} r ${hex(r)}`,
        );
    }
    expect(bad).toEqual([]);
    // under the floor every block gets the floor's scale (docs/protocol.md: 0x346facad)
    expect(scale[0]).toBe(0x346facad);
    expect(scale[numberToBf16(1e-5)]).toBe(0x346facad);
  });

  it(`fp8 codes e4m3(fl32(x * r)) of 6,000 blocks with random and boundary amax, NaN and infinities (seed ${SEED})`, async () => {
    const rand = rng(SEED);
    const pivots = [
      0x0000, 0x0001, 0x007f, 0x0080, 0x38cf, 0x38d0, 0x38d1, 0x38d2, 0x3f80, 0x43df, 0x43e0, 0x43e1, 0x7f00,
      0x7f7e, 0x7f7f,
    ];
    while (pivots.length < 6000) pivots.push(rand() < 0.2 ? int(rand, 1, 254) << 7 : int(rand, 0, 0x7f7f));
    const x = new Uint16Array(pivots.length * 128);
    pivots.forEach((m, b) => {
      const start = b * 128;
      x[start + int(rand, 0, 127)] = m | (int(rand, 0, 1) << 15);
      for (let i = start; i < start + 128; i++) {
        if (x[i] !== 0) continue;
        const r = rand();
        if (r < 0.03) x[i] = [0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0x8000][int(rand, 0, 5)];
        else if (r < 0.1)
          x[i] = m | (int(rand, 0, 1) << 15); // ties with the amax itself
        else x[i] = int(rand, 0, m) | (int(rand, 0, 1) << 15); // any magnitude up to the amax
      }
    });
    const want = quantizeRows(x, 128, "amax");
    const { recip } = await wgslScales(pivots.map((_, b) => blockAmax(x, b * 128)));
    const data = new Uint32Array(x.length * 2);
    for (let i = 0; i < x.length; i++) {
      data[2 * i] = x[i];
      data[2 * i + 1] = recip[Math.floor(i / 128)];
    }
    const got = await probeCodec("probeFp8EncodeAmax", data);
    const bad: string[] = [];
    for (let i = 0; i < x.length && bad.length < 5; i++) {
      if (got[2 * i] !== want.q[i])
        bad.push(
          `bf16 ${hex(x[i])} in block ${Math.floor(i / 128)} (r ${hex(recip[Math.floor(i / 128)])}): wgsl ${hex(got[2 * i])}, core ${hex(want.q[i])}`,
        );
    }
    expect(bad).toEqual([]);
  });
});
