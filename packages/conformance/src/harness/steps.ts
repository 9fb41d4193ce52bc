import type { WorldCase } from "../generators/world.js";
import type { PropertyContext } from "../property.js";
import { runStep, type StepOptions } from "./drive.js";
import { provenanceExperts } from "./experts.js";
import { makeInputs } from "./inputs.js";
import { withSession } from "./session.js";
import { type VerifyOptions, verifyStep } from "./verify.js";

/**
 * Runs every step of a case on one session with provenance experts and checks each step as
 * `verify` says, right after it completes.
 */
export async function runAndVerify(
  ctx: PropertyContext,
  c: WorldCase,
  verify: VerifyOptions,
  options: Omit<StepOptions, "label"> = {},
): Promise<void> {
  await withSession(ctx, c.config, async (session) => {
    const experts = provenanceExperts(c.config);
    for (let i = 0; i < c.steps.length; i++) {
      const label = c.steps.length > 1 ? `step ${i}` : "step";
      const inputs = makeInputs(c.config, c.steps[i]);
      const outcome = await runStep(session, inputs, experts, { ...options, label });
      verifyStep(c.config, inputs, outcome, verify, label);
    }
  });
}
