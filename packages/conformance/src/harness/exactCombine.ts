import type { EpConfig, ExpertOutputOf, RankInput } from "@switchyard/core";
import type { WorldCase } from "../generators/world.js";
import type { PropertyContext } from "../property.js";
import { checkCombineExact } from "./checkCombine.js";
import { runStep } from "./drive.js";
import { outputExperts } from "./experts.js";
import { makeInputs } from "./inputs.js";
import { Problems } from "./problems.js";
import { withSession } from "./session.js";

/** How a bit-exact combine property chooses each step's weights and expert outputs. */
export interface ChosenProducts {
  /** The step's inputs with the weights the outputs are built for (e.g. powers of two). */
  weights(inputs: RankInput[]): RankInput[];
  /** Expert outputs for those inputs, keyed by provenance, so that each product w * o is chosen. */
  outputs(config: EpConfig, inputs: RankInput[]): ExpertOutputOf;
}

/**
 * Runs every step of a case on one session with the chosen weights and expert outputs and checks
 * every rank's `y` bit for bit (the sign of zero included) against core's `referenceCombine`.
 */
export async function checkExactCombine(
  ctx: PropertyContext,
  c: WorldCase,
  chosen: ChosenProducts,
): Promise<void> {
  await withSession(ctx, c.config, async (session) => {
    for (let i = 0; i < c.steps.length; i++) {
      const label = c.steps.length > 1 ? `step ${i}` : "step";
      const inputs = chosen.weights(makeInputs(c.config, c.steps[i]));
      const outputOf = chosen.outputs(c.config, inputs);
      const outcome = await runStep(session, inputs, outputExperts(c.config, outputOf), { label });
      const problems = new Problems();
      checkCombineExact(c.config, inputs, outcome.y, outputOf, problems);
      problems.throwIfAny(label);
    }
  });
}
