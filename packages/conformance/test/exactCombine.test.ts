import { referenceBackend } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { PROPERTY_NAMES, runConformance } from "../src/index.js";
import { partialFromFirstProduct, partialSlotsReversed, sumFromFirstPartial } from "./broken/order.js";

/** Fixed so CI is reproducible. */
const SEED = 20240611;

/**
 * Two wrong combines that only one property each can see: every other property (the suite as it
 * was before `combine/exact-slot-order` and `combine/zero-sign`, and the other new one) passes
 * them, so those two are what closes each hole; `broken.test.ts` shows they fail it.
 */
const HOLES = [
  { backend: partialSlotsReversed, closedBy: "combine/exact-slot-order" },
  { backend: sumFromFirstPartial, closedBy: "combine/zero-sign" },
];

describe("bit-exact combine: the order within a partial and the sign of zero", () => {
  for (const { backend, closedBy } of HOLES) {
    it(`${backend.name} passes every property but ${closedBy}`, async () => {
      const others = PROPERTY_NAMES.filter((n) => n !== closedBy);
      const report = await runConformance(backend, { only: others, seed: SEED });
      const failed = report.results.filter((r) => r.status === "fail").map((r) => `${r.name}: ${r.error}`);
      expect(failed).toEqual([]);
      const target = await runConformance(backend, { only: closedBy, seed: SEED, shrink: false });
      expect(target.results[0].status).toBe("fail");
    });
  }

  it("a partial started from its first product passes both (the home's +0 start hides the partial's zero sign)", async () => {
    const only = ["combine/exact-slot-order", "combine/zero-sign", "combine/exact-order"];
    for (const backend of [partialFromFirstProduct, referenceBackend]) {
      const report = await runConformance(backend, { only, seed: SEED, numRuns: 30 });
      for (const r of report.results) expect(r.status, `${backend.name} ${r.name}: ${r.error}`).toBe("pass");
    }
  });
});
