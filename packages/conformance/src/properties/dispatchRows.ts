import { describeWorld, worldArb } from "../generators/world.js";
import { runAndVerify } from "../harness/steps.js";
import { defineProperty } from "../property.js";

/** Each local expert receives exactly the routed rows; counts and provenance words are right. */
export const dispatchRows = defineProperty({
  name: "dispatch/rows",
  required: true,
  summary:
    "each local expert receives exactly the routed (srcRank, srcToken, slot) rows, no -1 slot, no duplicate; " +
    "sourceCounts, expertCounts and meta right",
  arbitrary: (space) => worldArb(space),
  check: (ctx, c) => runAndVerify(ctx, c, { rows: true }),
  describe: describeWorld,
});
