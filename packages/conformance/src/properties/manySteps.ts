import { describeWorld, worldArb } from "../generators/world.js";
import { runAndVerify } from "../harness/steps.js";
import { defineProperty } from "../property.js";

/** Consecutive steps on one session (routing and token counts change, 0 included) stay correct. */
export const manySteps = defineProperty({
  name: "session/many-steps",
  required: true,
  summary:
    "3..6 steps (deep: up to 16) on one session with changing routing and token counts (0 included): " +
    "every step's rows, payload and combine right (no stale counts, flags or rows)",
  arbitrary: (space, ctx) => worldArb(space, { minSteps: 3, maxSteps: ctx.deep ? 16 : 6 }),
  check: (ctx, c) => runAndVerify(ctx, c, { payload: true, combine: true }),
  describe: describeWorld,
});
