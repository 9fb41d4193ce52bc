import {
  defineConfig,
  type EpConfig,
  FP8_BLOCK,
  numberToBf16,
  quantizeRows,
  ReferenceSession,
  type ScaleFormat,
} from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { webgpuBackend } from "../src/index.js";
import { WebGpuSession } from "../src/session.js";
import { expectSameDispatch } from "./helpers.js";

/**
 * One 128-element block per kind, on the boundaries of the scale formats (docs/protocol.md): its
 * largest finite magnitude at zero, under, at and just over the amax floor fl32(1e-4), at 448 and
 * its bf16 neighbours, the largest finite bf16, a bf16 subnormal, a power of two, beside NaN and
 * infinities that must not move the scale.
 */
function edgeBlocks(): Uint16Array[] {
  const block = (amax: number, fill: (i: number) => number) =>
    Uint16Array.from({ length: FP8_BLOCK }, (_, i) => (i === 37 ? amax : fill(i)));
  const small = (i: number) => ((i * 0x1b3) & 0x38cf) | ((i & 1) << 15); // magnitudes under the floor
  const mixed = (i: number) => ((i * 0x2c5) % 0x3f80) | ((i & 2) << 14);
  return [
    block(0x8000, (i) => (i & 1) << 15), // signed zeros only
    block(0x38d0, small), // amax one bf16 step under the floor
    block(0x38d1, small), // the first bf16 over the floor
    block(0x0001, (i) => i & 1), // subnormals
    block(numberToBf16(448), mixed),
    block(numberToBf16(446), mixed),
    block(numberToBf16(450), mixed),
    block(0x7f7f, mixed), // the largest finite bf16
    block(0xff7f, (i) => [0x7f7e, 0xff00, 0x0001, 0x3f80][i % 4]),
    block(0x4000, (i) => (i % 3 === 0 ? [0x7f80, 0xff80, 0x7fc0, 0xffc1][i % 4] : mixed(i))), // 2.0 beside NaN and Inf
    block(0x7fc0, () => 0xff80), // nothing finite: amax 0, NaN keeps its sign, Inf saturates
  ];
}

async function checkEdgeBlocks(config: EpConfig): Promise<void> {
  const blocks = edgeBlocks();
  const x = new Uint16Array(config.maxTokensPerRank * config.hidden);
  for (let i = 0; i < x.length / FP8_BLOCK; i++) x.set(blocks[i % blocks.length], i * FP8_BLOCK);
  const T = config.maxTokensPerRank;
  // every token to expert t % E and (t + 1) % E: each rank receives rows from both ranks
  const topkIdx = Int32Array.from(
    { length: T * 2 },
    (_, i) => (Math.floor(i / 2) + (i % 2)) % config.experts,
  );
  const input = { x, topkIdx, topkWeights: new Float32Array(T * 2).fill(0.5) };
  const gpu = await WebGpuSession.create(config);
  const ref = new ReferenceSession(config);
  try {
    for (let r = 0; r < config.ranks; r++) {
      await gpu.dispatchSend(r, input);
      await ref.dispatchSend(r, input);
    }
    // every rank sends the same tokens, so each delivered row is token meta[1]'s row of core's codec
    const want = quantizeRows(x, config.hidden, config.scaleFormat as ScaleFormat);
    const H = config.hidden;
    const S = H / FP8_BLOCK;
    let rows = 0;
    for (let r = 0; r < config.ranks; r++) {
      const got = await gpu.dispatchRecv(r);
      expectSameDispatch(config, got, await ref.dispatchRecv(r), `${config.scaleFormat} rank ${r}`);
      for (let e = 0; e < got.expertCounts.length; e++) {
        for (let i = 0; i < got.expertCounts[e]; i++, rows++) {
          const row = got.expertOffsets[e] + i;
          const t = got.meta[row * 4 + 1];
          const at = `rank ${r} row ${row} (token ${t})`;
          expect(Array.from(got.x.subarray(row * H, (row + 1) * H)), `${at} fp8`).toEqual(
            Array.from(want.q.subarray(t * H, (t + 1) * H)),
          );
          expect(Array.from(got.scales?.subarray(row * S, (row + 1) * S) ?? []), `${at} scales`).toEqual(
            Array.from(want.scales.subarray(t * S, (t + 1) * S)),
          );
        }
      }
    }
    expect(rows).toBe(config.maxTokensPerRank * 2 * config.ranks);
  } finally {
    await gpu.destroy();
  }
}

describe("scale formats", () => {
  it("declares pow2, amax and ue8m0", () => {
    expect(webgpuBackend.capabilities.scaleFormats).toEqual(["pow2", "amax", "ue8m0"]);
  });

  for (const scaleFormat of ["amax", "ue8m0", "pow2"] as const) {
    for (const layout of ["masked", "contiguous"] as const) {
      it(`${scaleFormat}, ${layout}: blocks on the formats' boundaries arrive as core quantises them`, async () => {
        await checkEdgeBlocks(
          defineConfig({
            ranks: 2,
            experts: 4,
            topK: 2,
            hidden: FP8_BLOCK * 11,
            maxTokensPerRank: 3,
            dispatchDtype: "fp8-e4m3",
            layout,
            scaleFormat,
          }),
        );
      });
    }
  }
});
