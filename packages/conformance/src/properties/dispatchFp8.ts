import { describeWorld, FP8_PAYLOADS, SCALE_FORMAT_PAYLOADS, worldArb } from "../generators/world.js";
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

/**
 * Every scale format beyond pow2 that the backend declares (`capabilities.scaleFormats`), bf16 input
 * and fp8 input: delivered fp8 bits and fp32 scales equal core's codec for the config's format bit
 * for bit (ue8m0 scales as fp32 2^s). Half of the steps put blocks on the formats' boundaries: all
 * zeros, one huge value, everything under the amax floor or at it, +-448, NaN and infinities,
 * amax exactly a power of two or 448 * 2^s.
 */
export const dispatchFp8ScaleFormats = defineProperty({
  name: "dispatch/fp8/scale-formats",
  required: false,
  summary:
    "fp8-e4m3 dispatch in the amax and ue8m0 scale formats: fp8 bits and scales equal core's codec for the format",
  wants: {
    dtypes: [
      { input: "bf16", dispatch: "fp8-e4m3" },
      { input: "fp8-e4m3", dispatch: "fp8-e4m3" },
    ],
    scaleFormats: ["amax", "ue8m0"],
  },
  arbitrary: (space) => worldArb(space, { payloads: SCALE_FORMAT_PAYLOADS }),
  check: (ctx, c) => runAndVerify(ctx, c, { payload: true }),
  describe: describeWorld,
});
