import { computeLayout } from "@switchyard/core";
import fc from "fast-check";
import { describeWorld, worldArb } from "../generators/world.js";
import { runStep } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { expectRefusal } from "../harness/refusal.js";
import { Rng } from "../harness/rng.js";
import { withSession } from "../harness/session.js";
import { combineRecvWeights, dispatchInputOf } from "../harness/weightsAt.js";
import { defineProperty } from "../property.js";

/** After destroy() every call throws DestroyedError, whether the session was idle or mid-step. */
export const destroyed = defineProperty({
  name: "session/destroyed",
  required: true,
  summary:
    "after destroy() (idle, after steps, or mid-step) every call (stats too, where present) is refused with DestroyedError",
  arbitrary: (space) =>
    fc.record({
      world: worldArb(space),
      when: fc.constantFrom("fresh", "after a step", "after some sends"),
      seed: fc.nat(),
    }),
  async check(ctx, { world, when, seed }) {
    const { config } = world;
    const rng = new Rng(seed, 9);
    const inputs = makeInputs(config, world.steps[0]);
    const rows = computeLayout(config).rows;
    await withSession(ctx, config, async (session) => {
      if (when === "after a step") await runStep(session, inputs, provenanceExperts(config));
      if (when === "after some sends") {
        const senders = rng.int(1, config.ranks);
        for (let r = 0; r < senders; r++) await session.dispatchSend(r, dispatchInputOf(config, inputs[r]));
      }
      await session.destroy();
      for (const r of rng.permutation(config.ranks).slice(0, 2)) {
        const what = (op: string) => `rank ${r} ${op} after destroy() (${when})`;
        await expectRefusal(what("dispatchSend"), "DestroyedError", () =>
          session.dispatchSend(r, dispatchInputOf(config, inputs[r])),
        );
        await expectRefusal(what("dispatchRecv"), "DestroyedError", () => session.dispatchRecv(r));
        await expectRefusal(what("combineSend"), "DestroyedError", () =>
          session.combineSend(r, new Uint16Array(rows * config.hidden)),
        );
        await expectRefusal(what("combineRecv"), "DestroyedError", () =>
          session.combineRecv(r, combineRecvWeights(config, inputs[r])),
        );
        if (typeof session.stats === "function")
          await expectRefusal(what("stats"), "DestroyedError", () => session.stats!(r));
      }
    });
  },
  describe: (v) => `${describeWorld(v.world)}; destroyed ${v.when}, seed ${v.seed}`,
});
