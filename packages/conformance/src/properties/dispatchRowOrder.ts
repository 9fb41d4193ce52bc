import { describeWorld, worldArb } from "../generators/world.js";
import { runAndVerify } from "../harness/steps.js";
import { defineProperty } from "../property.js";

/** The documented row order (gated: backends without deterministicRowOrder are compared as sets only). */
export const dispatchRowOrder = defineProperty({
  name: "dispatch/row-order",
  required: false,
  summary:
    "rows in documented order: ascending (srcRank, srcToken) per expert block " +
    "(masked: packed at its front; contiguous: before its padding)",
  gate: (caps) => (caps.deterministicRowOrder ? null : "backend declares deterministicRowOrder false"),
  arbitrary: (space) => worldArb(space),
  check: (ctx, c) => runAndVerify(ctx, c, { rows: true, order: true }),
  describe: describeWorld,
});
