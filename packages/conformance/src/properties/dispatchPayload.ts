import { ANY_PAYLOADS, describeWorld, worldArb } from "../generators/world.js";
import { runAndVerify } from "../harness/steps.js";
import { defineProperty } from "../property.js";

/** Payloads arrive bit-exact (any bits: NaNs, infinities, signed zeros, subnormals), fp8 scales too. */
export const dispatchPayload = defineProperty({
  name: "dispatch/payload",
  required: true,
  summary: "every delivered row's payload (and fp8 block scales) equals referenceDispatch bit for bit",
  arbitrary: (space) => worldArb(space, { payloads: ANY_PAYLOADS }),
  check: (ctx, c) => runAndVerify(ctx, c, { payload: true }),
  describe: describeWorld,
});
