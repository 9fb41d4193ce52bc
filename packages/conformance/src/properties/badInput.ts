import { computeLayout, type RankInput, type Session } from "@switchyard/core";
import fc from "fast-check";
import { BAD_INPUT_KINDS, type BadCall, type BadInputKind } from "../generators/badInput.js";
import { makeSchedule } from "../generators/schedule.js";
import { describeWorld, worldArb } from "../generators/world.js";
import { runStep, type StepHooks } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { expectRefusal } from "../harness/refusal.js";
import { Rng } from "../harness/rng.js";
import { withSession } from "../harness/session.js";
import { verifyStep } from "../harness/verify.js";
import { type ConformanceProperty, defineProperty } from "../property.js";

function hooksFor(session: Session, victim: number, bad: BadCall): StepHooks {
  const refuse = (call: () => unknown) =>
    expectRefusal(`${bad.stage} with ${bad.description}`, "InputError", call).then(() => {});
  switch (bad.stage) {
    case "dispatchSend":
      return {
        beforeSend: async (r) => {
          if (r === victim) await refuse(() => session.dispatchSend(bad.rank, bad.input as RankInput));
        },
      };
    case "dispatchRecv":
      return {
        beforeRecv: async (r) => {
          if (r === victim) await refuse(() => session.dispatchRecv(bad.rank));
        },
      };
    case "combineSend":
      return {
        beforeCombineSend: async (r) => {
          if (r === victim) await refuse(() => session.combineSend(bad.rank, bad.expertOut as Uint16Array));
        },
      };
  }
}

function badInputProperty(kind: BadInputKind): ConformanceProperty {
  return defineProperty({
    name: `input/${kind.name}`,
    required: kind.required,
    summary: `${kind.summary}: refused with InputError before anything moves; the step then completes correctly`,
    wants: kind.wants,
    arbitrary: (space) =>
      fc.record({
        world: worldArb(space, { minSteps: 2 }),
        warmUp: fc.boolean(),
        victim: fc.nat(),
        seed: fc.nat(),
      }),
    async check(ctx, { world, warmUp, victim: pick, seed }) {
      const { config } = world;
      fc.pre(kind.applies(config));
      const experts = provenanceExperts(config);
      await withSession(ctx, config, async (session) => {
        if (warmUp)
          await runStep(session, makeInputs(config, world.steps[1]), experts, { label: "warm-up step" });
        const inputs = makeInputs(config, world.steps[0]);
        const victim = pick % config.ranks;
        const rng = new Rng(seed, 5);
        const bad = kind.make(config, victim, inputs[victim], rng, computeLayout(config).rows);
        const label = `step with the bad call on rank ${victim}`;
        const schedule = { ...makeSchedule(config.ranks, "phased", seed), concurrent: false };
        const hooks = hooksFor(session, victim, bad);
        const outcome = await runStep(session, inputs, experts, { schedule, hooks, label });
        verifyStep(config, inputs, outcome, { payload: true, combine: true }, `${label} (after the refusal)`);
        const next = makeInputs(config, world.steps[1]);
        const after = await runStep(session, next, experts, { label: "next step" });
        verifyStep(config, next, after, { payload: true, combine: true }, "next step");
      });
    },
    describe: (v) =>
      `${describeWorld(v.world)}; victim #${v.victim}, seed ${v.seed}${v.warmUp ? ", after a warm-up step" : ""}`,
  });
}

/** One property per kind of bad input: `input/dtype`, `input/shape`, ... */
export const badInputProperties: readonly ConformanceProperty[] = BAD_INPUT_KINDS.map(badInputProperty);
