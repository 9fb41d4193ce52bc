import { describeWorld, worldArb } from "../generators/world.js";
import { powerOfTwoWeights } from "../harness/cancelling.js";
import { checkExactCombine } from "../harness/exactCombine.js";
import { edgeOutputs, edgeWeights, homeSlotOrderOutputs } from "../harness/homeWeights.js";
import { defineProperty } from "../property.js";

const wants = { combineWeights: ["home"], layouts: ["masked"] } as const;

/**
 * With `combineWeights: "home"` the home sums every used slot's w * row in ascending slot order in
 * one fp32 accumulator, whichever ranks host the slots (docs/protocol.md, "Combine with the weights
 * at home"); the weights are the ones passed to combineRecv, and dispatch gets none.
 */
export const combineHomeSlotOrder = defineProperty({
  name: "combine/home-weights/slot-order",
  required: false,
  summary:
    'combineWeights "home": dispatch without weights, weights at combineRecv; y bit-exact with the reference, each token\'s used slots weighted at home and summed in ascending slot order in fp32 from +0, rounded once (checked with +-2^40 pairs across ranks, so per-rank partials, another order or a tree change y)',
  wants,
  gate: (caps) => (caps.maxTopK < 3 ? "needs topK >= 3 (three used slots of a token)" : null),
  arbitrary: (space) => worldArb(space, { routing: ["stacked", "uniform", "hot", "single"] }),
  check: (ctx, c) => checkExactCombine(ctx, c, { weights: powerOfTwoWeights, outputs: homeSlotOrderOutputs }),
  describe: describeWorld,
});

/** The home's sum with weights on fp32's boundaries: zeros of both signs, subnormals, negatives. */
export const combineHomeEdges = defineProperty({
  name: "combine/home-weights/edges",
  required: false,
  summary:
    'combineWeights "home": y bit-exact with the reference for weights +-0, subnormal (2^-149, 2^-140, 2^-127), 2^-126 and negative, against outputs up to 2^100 and down to 2^-100, with -1 slots, empty tokens and every slot on one rank',
  wants,
  arbitrary: (space) => worldArb(space, { routing: ["single", "stacked", "uniform"] }),
  check: (ctx, c) => checkExactCombine(ctx, c, { weights: edgeWeights, outputs: edgeOutputs }),
  describe: describeWorld,
});
