import fc from "fast-check";
import { describeSchedule, makeSchedule, scheduleArb } from "../generators/schedule.js";
import { describeWorld, worldArb } from "../generators/world.js";
import { runStep } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { withSession } from "../harness/session.js";
import { verifyStep } from "../harness/verify.js";
import { defineProperty } from "../property.js";

/** Send and receive halves called rank by rank in random valid orders give the reference result. */
export const phaseInterleaving = defineProperty({
  name: "phases/interleaving",
  required: true,
  summary:
    "all dispatchSends, then dispatchRecv / combineSend in random rank orders or random interleavings " +
    "(also concurrently), then combineRecvs in random order: same result as the reference",
  arbitrary: (space) =>
    fc.record({
      world: worldArb(space, { minSteps: 1, maxSteps: 2 }),
      schedules: fc.array(scheduleArb(), { minLength: 2, maxLength: 2 }),
    }),
  async check(ctx, { world, schedules }) {
    const { config } = world;
    await withSession(ctx, config, async (session) => {
      for (let i = 0; i < world.steps.length; i++) {
        const schedule = makeSchedule(config.ranks, schedules[i].mode, schedules[i].seed);
        const label = `step ${i} (${schedules[i].mode}: ${describeSchedule(schedule)})`;
        const inputs = makeInputs(config, world.steps[i]);
        const outcome = await runStep(session, inputs, provenanceExperts(config), { schedule, label });
        verifyStep(config, inputs, outcome, { payload: true, combine: true }, label);
      }
    });
  },
  describe: (v) =>
    `${describeWorld(v.world)}; schedules ${v.schedules.map((s) => `${s.mode}#${s.seed}`).join(", ")}`,
});
