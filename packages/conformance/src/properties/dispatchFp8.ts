import { describeWorld, FP8_PAYLOADS, worldArb } from "../generators/world.js";
import { runAndVerify } from "../harness/steps.js";
import { defineProperty } from "../property.js";

/**
 * bf16 input quantised on the way: fp8 bits and block scales equal core's codec bit for bit. A third
 * of the steps put every block's largest magnitude on a boundary of the block-scale rule.
 */
export const dispatchFp8Quantize = defineProperty({
  name: "dispatch/fp8/quantize",
  required: false,
  summary:
    "bf16 input, fp8-e4m3 dispatch: delivered fp8 bits and fp32 block scales equal core's quantizeRows",
  wants: { dtypes: [{ input: "bf16", dispatch: "fp8-e4m3" }] },
  arbitrary: (space) => worldArb(space, { payloads: FP8_PAYLOADS }),
  check: (ctx, c) => runAndVerify(ctx, c, { payload: true }),
  describe: describeWorld,
});

/** fp8 input passes through: bits and the caller's scales arrive unchanged. */
export const dispatchFp8Input = defineProperty({
  name: "dispatch/fp8/input",
  required: false,
  summary: "fp8-e4m3 input: delivered fp8 bits and fp32 scales are the input's, bit for bit",
  wants: { dtypes: [{ input: "fp8-e4m3", dispatch: "fp8-e4m3" }] },
  arbitrary: (space) => worldArb(space, { payloads: FP8_PAYLOADS }),
  check: (ctx, c) => runAndVerify(ctx, c, { payload: true }),
  describe: describeWorld,
});
