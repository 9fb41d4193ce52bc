import { describeWorld, worldArb } from "../generators/world.js";
import { cancellingOutputs, powerOfTwoWeights } from "../harness/cancelling.js";
import { checkExactCombine } from "../harness/exactCombine.js";
import { defineProperty } from "../property.js";

/** Combined outputs bit-exact with the protocol's summation order of the partials (docs/protocol.md). */
export const combineExactOrder = defineProperty({
  name: "combine/exact-order",
  required: true,
  summary:
    "y bit-exact with the reference: each expert rank's partial (its slots in slot order, fp32, rounded to bf16), partials summed at home in ascending rank order in fp32, rounded once (checked with experts whose partials cancel)",
  arbitrary: (space) => worldArb(space),
  check: (ctx, c) => checkExactCombine(ctx, c, { weights: powerOfTwoWeights, outputs: cancellingOutputs }),
  describe: describeWorld,
});
