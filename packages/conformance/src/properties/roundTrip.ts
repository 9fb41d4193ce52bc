import { DTYPE_PAIRS } from "../generators/space.js";
import type { WorldCase } from "../generators/world.js";
import { describeWorld, worldArb } from "../generators/world.js";
import { checkRoundTrip } from "../harness/checkRoundTrip.js";
import { runStep } from "../harness/drive.js";
import { identityExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { Problems } from "../harness/problems.js";
import { withSession } from "../harness/session.js";
import { defineProperty, type PropertyContext } from "../property.js";

async function roundTrip(ctx: PropertyContext, c: WorldCase): Promise<void> {
  await withSession(ctx, c.config, async (session) => {
    const inputs = makeInputs(c.config, c.steps[0]);
    const out = await runStep(session, inputs, identityExperts(c.config));
    const problems = new Problems();
    checkRoundTrip(c.config, inputs, out.y, problems);
    problems.throwIfAny("round trip through identity experts");
  });
}

/** Identity experts give back (sum of weights) * x, within the combine bound (and the fp8 bound where fp8 is used). */
export const roundTripIdentity = defineProperty({
  name: "roundtrip/identity",
  required: true,
  summary:
    "identity experts: y[t] = (sum of used weights) * x[t] within the combine bound (plus the fp8 bound with fp8)",
  arbitrary: (space) => worldArb(space),
  check: roundTrip,
  describe: describeWorld,
});

/** The round trip with fp8 on the way: quantise-on-dispatch and fp8 input. */
export const roundTripFp8 = defineProperty({
  name: "roundtrip/fp8",
  required: false,
  summary:
    "identity experts with fp8 dispatch: y = W*x within e4m3's 2^-4 relative + 2^-10*scale absolute bound",
  wants: { dtypes: DTYPE_PAIRS.filter((p) => p.dispatch === "fp8-e4m3") },
  arbitrary: (space) => worldArb(space),
  check: roundTrip,
  describe: describeWorld,
});
