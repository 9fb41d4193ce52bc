import { computeLayout, type DispatchResult, type Session } from "@switchyard/core";
import fc from "fast-check";
import { describeWorld, worldArb } from "../generators/world.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { ConformanceMismatch } from "../harness/problems.js";
import { expectRefusal } from "../harness/refusal.js";
import { Rng } from "../harness/rng.js";
import { withSession } from "../harness/session.js";
import { verifyStep } from "../harness/verify.js";
import { combineRecvWeights, dispatchInputOf } from "../harness/weightsAt.js";
import { defineProperty } from "../property.js";

type Op = "dispatchSend" | "dispatchRecv" | "combineSend" | "combineRecv";
const OPS: readonly Op[] = ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv"];
/** The op a rank may call next, by how many of the step's four calls it has made. */
const NEXT: readonly Op[] = ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv"];

/**
 * Out-of-order calls (a receive before its send, combine before dispatch, a call repeated) are
 * refused with PhaseError; the step then completes correctly.
 */
export const phaseOrder = defineProperty({
  name: "session/phase-order",
  required: true,
  summary:
    "calls out of a rank's phase order (receive before send, combine before dispatch, repeated calls, " +
    "after the step) refused with PhaseError; the step then completes correctly",
  arbitrary: (space) =>
    fc.record({ world: worldArb(space), seed: fc.nat(), tries: fc.integer({ min: 1, max: 4 }) }),
  async check(ctx, { world, seed, tries }) {
    const { config } = world;
    const R = config.ranks;
    const rows = computeLayout(config).rows;
    const rng = new Rng(seed, 8);
    const inputs = makeInputs(config, world.steps[0]);
    const experts = provenanceExperts(config);
    await withSession(ctx, config, async (session: Session) => {
      const made = new Array<number>(R).fill(0);
      const results = new Array<DispatchResult>(R);
      const y = new Array<Uint16Array>(R);
      const legal = async (r: number): Promise<void> => {
        const op = NEXT[made[r]];
        if (op === "dispatchSend") await session.dispatchSend(r, dispatchInputOf(config, inputs[r]));
        else if (op === "dispatchRecv") results[r] = await session.dispatchRecv(r);
        else if (op === "combineSend") await session.combineSend(r, experts(r, results[r], rows));
        else y[r] = await session.combineRecv(r, combineRecvWeights(config, inputs[r]));
        made[r]++;
      };
      const illegal = async (): Promise<void> => {
        const r = rng.int(0, R - 1);
        const wrong = OPS.filter((op) => op !== NEXT[made[r] % 4]);
        const op = rng.pick(wrong);
        const zeros = new Uint16Array(rows * config.hidden);
        await expectRefusal(`rank ${r} ${op} after ${made[r]} of its 4 calls`, "PhaseError", () => {
          if (op === "dispatchSend") return session.dispatchSend(r, dispatchInputOf(config, inputs[r]));
          if (op === "dispatchRecv") return session.dispatchRecv(r);
          if (op === "combineSend") return session.combineSend(r, zeros);
          return session.combineRecv(r, combineRecvWeights(config, inputs[r]));
        });
      };
      // The step in stages (all sends, all receives, all combine sends, all combine receives),
      // with illegal calls at random points, including before the first call and after the last.
      const points = new Set(Array.from({ length: tries }, () => rng.int(0, 4 * R)));
      let position = 0;
      const maybeIllegal = async () => {
        if (points.has(position)) await illegal();
        position++;
      };
      for (let stage = 0; stage < 4; stage++) {
        for (const r of rng.permutation(R)) {
          await maybeIllegal();
          try {
            await legal(r);
          } catch (e) {
            throw new ConformanceMismatch(
              `rank ${r} ${NEXT[stage]} (a valid call) failed after a refused call: ${e}`,
            );
          }
        }
      }
      await maybeIllegal();
      verifyStep(
        config,
        inputs,
        { dispatch: results, y },
        { payload: true, combine: true },
        "step with refused calls",
      );
    });
  },
  describe: (v) => `${describeWorld(v.world)}; ${v.tries} illegal call(s), seed ${v.seed}`,
});
