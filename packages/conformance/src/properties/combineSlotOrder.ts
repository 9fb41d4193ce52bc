import { describeWorld, worldArb } from "../generators/world.js";
import { powerOfTwoWeights } from "../harness/cancelling.js";
import { checkExactCombine } from "../harness/exactCombine.js";
import { slotOrderOutputs } from "../harness/slotOrder.js";
import { defineProperty } from "../property.js";

/** Each expert rank sums a token's entries in slot order within its partial (docs/protocol.md). */
export const combineSlotOrder = defineProperty({
  name: "combine/exact-slot-order",
  required: true,
  summary:
    "y bit-exact with the reference when a token has 3 or more slots on one rank (stacked routing): within a partial the entries are summed in slot order (checked with +-2^40 pairs around distinct powers of two, so any other order within a rank changes the partial)",
  gate: (caps) => (caps.maxTopK < 3 ? "needs topK >= 3 (three slots of a token on one rank)" : null),
  arbitrary: (space) => worldArb(space, { routing: ["stacked"], minSlotsPerRank: 3 }),
  check: (ctx, c) => checkExactCombine(ctx, c, { weights: powerOfTwoWeights, outputs: slotOrderOutputs }),
  describe: describeWorld,
});
