import { computeLayout, defineConfig, type EpConfig, validateRankInput } from "@switchyard/core";
import fc from "fast-check";
import { freshInput } from "../generators/badInput.js";
import { configArb, describeConfig } from "../generators/config.js";
import { ConformanceMismatch, errorMessage, errorName } from "../harness/problems.js";
import { Rng } from "../harness/rng.js";
import { defineProperty } from "../property.js";
import { configProblems, withDefaults } from "./configOracle.js";
import { countRefusal, type FuzzCounts } from "./counts.js";
import { inputProblems } from "./inputOracle.js";
import { mutateConfig } from "./mutateConfig.js";
import { mutateInput } from "./mutateInput.js";
import { badRank, show, snapshot } from "./values.js";

/** Random edits of configs and inputs per case (the case is one valid config and two seeds). */
const PER_CASE = 24;

function shallowSnapshot(v: unknown): () => boolean {
  if (v === null || typeof v !== "object") return () => true;
  const entries = Object.entries(v);
  return () =>
    Object.keys(v).length === entries.length &&
    entries.every(([k, x]) => Object.is((v as Record<string, unknown>)[k], x));
}

function fuzzConfig(valid: EpConfig, rng: Rng, counts: FuzzCounts): void {
  const { input, edits } = mutateConfig(valid, rng);
  const what = `defineConfig after ${edits.join(", ")}`;
  const expected = withDefaults(input);
  const problems = configProblems(expected);
  const unchanged = shallowSnapshot(input);
  let config: Readonly<EpConfig> | null = null;
  let error: unknown = null;
  try {
    config = defineConfig(input as EpConfig);
  } catch (e) {
    error = e;
  }
  if (!unchanged()) throw new ConformanceMismatch(`${what}: the input object was modified`);
  if (problems.size > 0) {
    counts.badTried++;
    if (error === null)
      throw new ConformanceMismatch(`${what}: accepted, but ${[...problems].join(", ")} break a rule`);
    if (errorName(error) !== "ConfigError")
      throw new ConformanceMismatch(
        `${what}: expected ConfigError, got ${errorName(error)}: ${errorMessage(error)}`,
      );
    const field = (error as { field?: unknown }).field;
    if (!problems.has(field as string))
      throw new ConformanceMismatch(
        `${what}: ConfigError names ${show(field)}, but the broken fields are ${[...problems].join(", ")}`,
      );
    countRefusal(counts, "ConfigError");
    return;
  }
  counts.validCalls++;
  counts.editedValid++;
  if (error !== null)
    throw new ConformanceMismatch(
      `${what}: a valid config refused: ${errorName(error)}: ${errorMessage(error)}`,
    );
  if (!Object.isFrozen(config)) throw new ConformanceMismatch(`${what}: the config is not frozen`);
  for (const [k, v] of Object.entries(expected)) {
    if (!Object.is((config as unknown as Record<string, unknown>)[k], v))
      throw new ConformanceMismatch(
        `${what}: config.${k} = ${show((config as never)[k])}, expected ${show(v)}`,
      );
  }
  computeLayout(config!);
}

function fuzzInput(config: EpConfig, rng: Rng, counts: FuzzCounts): void {
  const valid = freshInput(config, rng.int(0, config.maxTokensPerRank), rng);
  const { input, edits } = mutateInput(config, valid, rng);
  const rank = rng.chance(0.1) ? badRank(config.ranks, rng) : rng.int(0, config.ranks - 1);
  const what = `validateRankInput(rank ${show(rank)}) after ${edits.join(", ")}`;
  const problems = inputProblems(config, rank, input);
  const changed = snapshot(input);
  let T: number | null = null;
  let error: unknown = null;
  try {
    T = validateRankInput(config, rank as number, input as never);
  } catch (e) {
    error = e;
  }
  const modified = changed();
  if (modified.length > 0)
    throw new ConformanceMismatch(`${what}: modified the caller's ${modified.join(", ")}`);
  if (problems.size > 0) {
    counts.badTried++;
    if (error === null)
      throw new ConformanceMismatch(`${what}: accepted, but ${[...problems].join(", ")} break a rule`);
    if (errorName(error) !== "InputError")
      throw new ConformanceMismatch(
        `${what}: expected InputError, got ${errorName(error)}: ${errorMessage(error)}`,
      );
    const e = error as { what?: unknown; rank?: unknown };
    if (!problems.has(e.what as string) || !Object.is(e.rank, rank))
      throw new ConformanceMismatch(
        `${what}: InputError names rank ${show(e.rank)}, ${show(e.what)}; expected rank ${show(rank)} and one of ${[...problems].join(", ")}`,
      );
    countRefusal(counts, "InputError");
    return;
  }
  counts.validCalls++;
  if (edits.length > 0) counts.editedValid++;
  if (error !== null)
    throw new ConformanceMismatch(
      `${what}: a valid input refused: ${errorName(error)}: ${errorMessage(error)}`,
    );
  const idx = (input as { topkIdx: Int32Array }).topkIdx;
  if (T !== idx.length / config.topK) throw new ConformanceMismatch(`${what}: returned T = ${T}`);
}

/**
 * `fuzz/core-api`: core's `defineConfig` and `validateRankInput` on randomly edited configs and
 * inputs. Each must accept exactly what the documented rules allow (an oracle written from the
 * docs, not from the code), refuse the rest with ConfigError / InputError naming a field that is
 * at fault, never throw anything else (not even while building the message), and never modify
 * the caller's objects or arrays.
 */
export function coreApiFuzz(counts: FuzzCounts) {
  return defineProperty({
    name: "fuzz/core-api",
    required: true,
    summary:
      "defineConfig / validateRankInput on random edits: exactly the documented rules, named errors, inputs untouched",
    arbitrary: (space) => fc.record({ config: configArb(space), seed: fc.nat() }),
    async check(_ctx, { config, seed }) {
      const rng = new Rng(seed, 11);
      for (let i = 0; i < PER_CASE; i++) fuzzConfig(config, rng, counts);
      for (let i = 0; i < PER_CASE; i++) fuzzInput(config, rng, counts);
    },
    describe: (v) => `${describeConfig(v.config)}; seed ${v.seed}`,
  });
}
