import { describeWorld, type WorldCase, worldArb } from "../generators/world.js";
import { cancellingExperts, cancellingOutputs, powerOfTwoWeights } from "../harness/cancelling.js";
import { checkCombineExact } from "../harness/checkCombine.js";
import { runStep } from "../harness/drive.js";
import { makeInputs } from "../harness/inputs.js";
import { Problems } from "../harness/problems.js";
import { withSession } from "../harness/session.js";
import { defineProperty, type PropertyContext } from "../property.js";

async function check(ctx: PropertyContext, c: WorldCase): Promise<void> {
  await withSession(ctx, c.config, async (session) => {
    for (let i = 0; i < c.steps.length; i++) {
      const label = c.steps.length > 1 ? `step ${i}` : "step";
      const inputs = powerOfTwoWeights(makeInputs(c.config, c.steps[i]));
      const outputOf = cancellingOutputs(c.config, inputs);
      const outcome = await runStep(session, inputs, cancellingExperts(c.config, outputOf), { label });
      const problems = new Problems();
      checkCombineExact(c.config, inputs, outcome.y, outputOf, problems);
      problems.throwIfAny(label);
    }
  });
}

/** Combined outputs bit-exact with the protocol's summation order (docs/protocol.md). */
export const combineExactOrder = defineProperty({
  name: "combine/exact-order",
  required: true,
  summary:
    "y bit-exact with the reference: each expert rank's partial (its slots in slot order, fp32, rounded to bf16), partials summed at home in ascending rank order in fp32, rounded once (checked with experts whose partials cancel)",
  arbitrary: (space) => worldArb(space),
  check,
  describe: describeWorld,
});
