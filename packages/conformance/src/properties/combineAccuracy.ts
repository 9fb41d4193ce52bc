import { describeWorld, worldArb } from "../generators/world.js";
import { runAndVerify } from "../harness/steps.js";
import { defineProperty } from "../property.js";

/** Combined outputs within the combine bound of the float64 weighted sum (bounds.ts). */
export const combineAccuracy = defineProperty({
  name: "combine/accuracy",
  required: true,
  summary:
    "y[t] = sum_k w[t][k] * expertOut(t, k) over used slots, within |y - y64| <= 2^-8|y64| + 2^-8(1+2^-8) sum_r|p_r| + (n+m+2)2^-24 sum|w o| + (m+1)2^-133 (n slots on m ranks, p_r rank r's partial)",
  arbitrary: (space) => worldArb(space),
  check: (ctx, c) => runAndVerify(ctx, c, { combine: true }),
  describe: describeWorld,
});
