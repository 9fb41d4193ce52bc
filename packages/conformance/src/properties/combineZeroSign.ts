import { describeWorld, worldArb } from "../generators/world.js";
import { checkExactCombine } from "../harness/exactCombine.js";
import { quarterWeights, zeroSignOutputs } from "../harness/zeroSign.js";
import { defineProperty } from "../property.js";

/** y's zeros carry the sign the protocol's sums give: +0 (docs/protocol.md, "The sign of zero"). */
export const combineZeroSign = defineProperty({
  name: "combine/zero-sign",
  required: true,
  summary:
    "y bit-exact with the reference, sign of zero included, where every element sums to zero: every partial -0 (tiny negative sums), every product -0, partials cancelling, mixed signed zeros; both accumulators start at +0, so y is +0",
  // The four ways are built on per-rank partials; weights at home sum the products in one fp32 sum,
  // whose zeros combine/home-weights/edges and core's tests check.
  wants: { combineWeights: ["expert"] },
  arbitrary: (space) => worldArb(space, { routing: ["uniform", "hot", "stacked"] }),
  check: (ctx, c) => checkExactCombine(ctx, c, { weights: quarterWeights, outputs: zeroSignOutputs }),
  describe: describeWorld,
});
