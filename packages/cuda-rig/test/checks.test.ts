import { defineConfig, type EpConfig, type RankInput, ReferenceSession } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { compareDispatchAny, expertOutputsAny } from "../src/checks/contiguous.js";
import { compareY, makeInputs, referenceY } from "../src/checks/step.js";

/** Dispatch and combine on core's reference session, the way a GPU check drives a backend. */
async function referenceStep(config: EpConfig, inputs: RankInput[]) {
  const s = new ReferenceSession(config);
  for (let r = 0; r < config.ranks; r++) await s.dispatchSend(r, inputs[r]);
  const results = [];
  for (let r = 0; r < config.ranks; r++) results.push(await s.dispatchRecv(r));
  for (let r = 0; r < config.ranks; r++) await s.combineSend(r, expertOutputsAny(config, r, results[r]));
  const ys = [];
  for (let r = 0; r < config.ranks; r++) ys.push(await s.combineRecv(r));
  return { results, ys };
}

describe("GPU check helpers on core's reference session (no GPU)", () => {
  for (const layout of ["masked", "contiguous"] as const) {
    it(`${layout}: the reference passes its own comparison, and a changed byte, count or padding row is caught`, async () => {
      const config = defineConfig({
        ranks: 2,
        dpSize: 1,
        experts: 8,
        topK: 3,
        hidden: 256,
        maxTokensPerRank: 20,
        dispatchDtype: "fp8-e4m3",
        layout,
        expertAlignment: layout === "contiguous" ? 8 : 1,
      });
      const inputs = makeInputs(config, 20, 5);
      const { results, ys } = await referenceStep(config, inputs);
      for (let r = 0; r < 2; r++) {
        expect(compareDispatchAny(config, inputs, r, results[r])).toEqual([]);
        expect(compareY(r, ys[r], referenceY(config, inputs, r))).toEqual([]);
      }
      const bad = { ...results[0], x: results[0].x.slice() };
      const firstRow =
        layout === "contiguous" ? 0 : bad.expertOffsets.findIndex((_, e) => bad.expertCounts[e] > 0) * 2 * 20;
      bad.x[firstRow * 256 + 3] ^= 1;
      expect(compareDispatchAny(config, inputs, 0, bad).join()).toMatch(/payload differs/);
      const badCounts = {
        ...results[0],
        sourceCounts: results[0].sourceCounts.map((v, i) => (i === 0 ? v + 1 : v)),
      };
      expect(compareDispatchAny(config, inputs, 0, badCounts).length).toBeGreaterThan(0);
      if (layout === "contiguous") {
        const e = results[0].expertCounts.findIndex((n) => n % 8 !== 0);
        const pad = results[0].expertOffsets[e] + results[0].expertCounts[e];
        const badPad = { ...results[0], meta: results[0].meta.slice() };
        badPad.meta[pad * 4] = 0;
        expect(compareDispatchAny(config, inputs, 0, badPad).join()).toMatch(/padding row/);
        // A padding row's payload and scales are unspecified: whatever a backend leaves there passes.
        const stalePad = {
          ...results[0],
          x: results[0].x.slice(),
          scales: results[0].scales?.slice() ?? null,
        };
        stalePad.x.fill(0x7f, pad * 256, (pad + 1) * 256);
        stalePad.scales?.fill(Number.NaN, pad * 2, (pad + 1) * 2);
        expect(compareDispatchAny(config, inputs, 0, stalePad)).toEqual([]);
        // The expert outputs of padding rows are NaN, so a combine that read one would differ.
        const out = expertOutputsAny(config, 0, results[0]);
        const padEnd = results[0].expertOffsets[e] + Math.ceil(results[0].expertCounts[e] / 8) * 8;
        expect(out.subarray(pad * 256, padEnd * 256).every((v) => v === 0x7fc0)).toBe(true);
        expect(out.subarray((pad - 1) * 256, pad * 256).some((v) => v === 0x7fc0)).toBe(false);
      }
    });
  }
});
