import type { EpConfig } from "@switchyard/core";
import fc from "fast-check";
import { badConfig, CONFIG_MUTATIONS } from "../generators/badConfig.js";
import { configArb, describeConfig } from "../generators/config.js";
import { DTYPE_PAIRS } from "../generators/space.js";
import { stepArb } from "../generators/step.js";
import { runStep } from "../harness/drive.js";
import { provenanceExperts } from "../harness/experts.js";
import { makeInputs } from "../harness/inputs.js";
import { ConformanceMismatch, errorMessage, errorName } from "../harness/problems.js";
import { Rng } from "../harness/rng.js";
import { withSession } from "../harness/session.js";
import { verifyStep } from "../harness/verify.js";
import { defineProperty, type PropertyContext } from "../property.js";

/** createSession must refuse `bad` with ConfigError; a valid session works afterwards. */
async function expectConfigError(
  ctx: PropertyContext,
  bad: unknown,
  description: string,
  valid: Readonly<EpConfig>,
  step: Parameters<typeof makeInputs>[1],
): Promise<void> {
  let created: Awaited<ReturnType<typeof ctx.backend.createSession>> | null = null;
  try {
    created = await ctx.backend.createSession(bad as EpConfig, ctx.sessionOptions);
  } catch (e) {
    if (errorName(e) !== "ConfigError")
      throw new ConformanceMismatch(
        `createSession with ${description}: expected ConfigError, got ${errorName(e)}: ${errorMessage(e)}`,
      );
  }
  if (created !== null) {
    await Promise.resolve()
      .then(() => created?.destroy())
      .catch(() => {});
    throw new ConformanceMismatch(`createSession with ${description}: accepted, expected ConfigError`);
  }
  await withSession(ctx, valid, async (session) => {
    const inputs = makeInputs(valid, step);
    const outcome = await runStep(session, inputs, provenanceExperts(valid), {
      label: "valid step afterwards",
    });
    verifyStep(valid, inputs, outcome, { payload: true, combine: true }, "valid step afterwards");
  });
}

const configCase = (space: Parameters<typeof configArb>[0]) =>
  configArb(space).chain((config) =>
    fc.record({
      config: fc.constant(config),
      step: stepArb(config, ["normal"]),
      pick: fc.nat({ max: CONFIG_MUTATIONS.length - 1 }),
      seed: fc.nat(),
    }),
  );

/** Every broken config rule is refused at createSession with ConfigError. */
export const configRefused = defineProperty({
  name: "config/refused",
  required: true,
  summary:
    "configs breaking one rule (experts % ranks, dpSize, topK > experts, zero / negative / fractional sizes, " +
    "unknown layout or dtype, fp8 input with bf16 dispatch, unknown field) refused with ConfigError at createSession",
  arbitrary: (space) => configCase(space),
  async check(ctx, c) {
    const bad = badConfig(c.config, ctx.caps, c.pick, new Rng(c.seed, 6));
    await expectConfigError(ctx, bad.config, bad.description, c.config, c.step);
  },
  describe: (v) => `${describeConfig(v.config)}; mutation #${v.pick}, seed ${v.seed}`,
});

/** fp8 needs hidden to be a multiple of the 128-element scale block. */
export const configFp8Hidden = defineProperty({
  name: "config/fp8-hidden",
  required: false,
  summary: "fp8 dispatch with hidden not a multiple of 128 refused with ConfigError at createSession",
  wants: { dtypes: DTYPE_PAIRS.filter((p) => p.dispatch === "fp8-e4m3") },
  gate: (caps) =>
    caps.hiddenMultiple % 128 === 0 ? "every hidden the backend allows is a multiple of 128" : null,
  arbitrary: (space) => configCase(space),
  async check(ctx, c) {
    const hm = Math.max(1, ctx.caps.hiddenMultiple);
    const rng = new Rng(c.seed, 7);
    let hidden = hm * rng.int(1, Math.max(1, Math.floor(Math.min(ctx.caps.maxHidden, 1024) / hm)));
    while (hidden % 128 === 0) hidden += hm;
    const description = `hidden = ${hidden} with ${c.config.inputDtype} -> fp8-e4m3`;
    await expectConfigError(ctx, { ...c.config, hidden }, description, c.config, c.step);
  },
  describe: (v) => `${describeConfig(v.config)}; seed ${v.seed}`,
});
