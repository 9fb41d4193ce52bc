import { describeWorld, type WorldCase, worldArb } from "../generators/world.js";
import { runStep } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { withSession } from "../harness/session.js";
import { verifyStep } from "../harness/verify.js";
import { defineProperty, type PropertyContext } from "../property.js";

/** Runs `steps` of `c` on a session of their own, verifying each; `label` prefixes the step's name. */
async function session(ctx: PropertyContext, c: WorldCase, from: number, to: number, label: string) {
  await withSession(ctx, c.config, async (s) => {
    const experts = provenanceExperts(c.config);
    for (let i = from; i < to; i++) {
      const inputs = makeInputs(c.config, c.steps[i]);
      const name = `${label}, step ${i - from}`;
      const outcome = await runStep(s, inputs, experts, { label: name });
      verifyStep(c.config, inputs, outcome, { payload: true, combine: true }, name);
    }
  });
}

/**
 * A session destroyed, then another of the same config with other traffic: the second session's
 * first step is right. Both first steps share an epoch, so a backend that reuses buffers (or
 * cached plans) of a destroyed session without clearing them delivers the first session's rows.
 */
export const backToBack = defineProperty({
  name: "session/back-to-back",
  required: true,
  summary:
    "two sessions of one config one after the other (the first destroyed), different traffic: the second session's first step is right",
  arbitrary: (space) =>
    worldArb(space, { minSteps: 2, maxSteps: 3 }).filter(
      (c) => JSON.stringify(c.steps[0]) !== JSON.stringify(c.steps[c.steps.length - 1]),
    ),
  async check(ctx, c) {
    const last = c.steps.length - 1;
    await session(ctx, c, 0, last, "first session");
    await session(ctx, c, last, last + 1, "second session");
  },
  describe: (c) => `${describeWorld(c)} (the last step on the second session)`,
});
