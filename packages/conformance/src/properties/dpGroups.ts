import { describeWorld, worldArb } from "../generators/world.js";
import { runStep } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { Problems } from "../harness/problems.js";
import { withSession } from "../harness/session.js";
import { verifyStep } from "../harness/verify.js";
import { defineProperty } from "../property.js";

/** With dpSize > 1 every rank of a group gets the whole group's combined output, the same bits on each. */
export const dpGroupOutput = defineProperty({
  name: "dp/group-output",
  required: false,
  summary:
    "dpSize > 1: each token dispatched once per group; every rank of the group receives the whole combined " +
    "output, identical bits on every rank of the group",
  wants: { dp: "groups" },
  arbitrary: (space) => worldArb(space),
  async check(ctx, c) {
    const { config } = c;
    await withSession(ctx, config, async (session) => {
      const inputs = makeInputs(config, c.steps[0]);
      const outcome = await runStep(session, inputs, provenanceExperts(config));
      verifyStep(config, inputs, outcome, { rows: true, combine: true });
      const problems = new Problems();
      for (let r = 0; r < config.ranks; r++) {
        const first = r - (r % config.dpSize);
        const a = outcome.y[first];
        const b = outcome.y[r];
        const i = a.findIndex((v, j) => v !== b[j]);
        if (i >= 0) problems.add(`rank ${r} differs from rank ${first} of its DP group at element ${i}`);
      }
      problems.throwIfAny("DP group outputs differ");
    });
  },
  describe: describeWorld,
});
