import fc from "fast-check";
import { describeWorld, worldArb } from "../generators/world.js";
import { runStep } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { ConformanceMismatch } from "../harness/problems.js";
import { withSession } from "../harness/session.js";
import { defineProperty } from "../property.js";

function firstDifference(a: Uint16Array[], b: Uint16Array[]): string | null {
  for (let r = 0; r < a.length; r++) {
    if (a[r].length !== b[r].length) return `rank ${r}: ${a[r].length} vs ${b[r].length} elements`;
    for (let i = 0; i < a[r].length; i++) {
      if (a[r][i] !== b[r][i])
        return `rank ${r} element ${i}: 0x${a[r][i].toString(16)} then 0x${b[r][i].toString(16)}`;
    }
  }
  return null;
}

/** The same step gives the same bits: again on the same session (after another step or not), and on a new session. */
export const combineRepeatable = defineProperty({
  name: "combine/repeatable",
  required: true,
  summary:
    "the same step repeated (right away or after another step, and on a fresh session) gives bit-identical y",
  arbitrary: (space) => fc.record({ world: worldArb(space, { minSteps: 2 }), between: fc.boolean() }),
  async check(ctx, { world, between }) {
    const { config, steps } = world;
    const experts = provenanceExperts(config);
    const inputs = makeInputs(config, steps[0]);
    const runs: Uint16Array[][] = [];
    await withSession(ctx, config, async (session) => {
      runs.push((await runStep(session, inputs, experts, { label: "first run" })).y);
      if (between) await runStep(session, makeInputs(config, steps[1]), experts, { label: "step between" });
      runs.push((await runStep(session, inputs, experts, { label: "second run" })).y);
    });
    await withSession(ctx, config, async (session) => {
      runs.push((await runStep(session, inputs, experts, { label: "run on a new session" })).y);
    });
    const labels = ["the second run on the same session", "a run on a new session"];
    for (let i = 1; i < runs.length; i++) {
      const diff = firstDifference(runs[0], runs[i]);
      if (diff)
        throw new ConformanceMismatch(`combine is not repeatable: ${labels[i - 1]} differs at ${diff}`);
    }
  },
  describe: (v) => `${describeWorld(v.world)}${v.between ? " (another step between)" : ""}`,
});
