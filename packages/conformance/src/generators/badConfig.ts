import type { Capabilities, EpConfig } from "@switchyard/core";
import type { Rng } from "../harness/rng.js";

/** A config that breaks one rule, and which. */
export interface BadConfig {
  readonly config: unknown;
  readonly description: string;
}

type Mutation = (c: EpConfig, caps: Capabilities, rng: Rng) => BadConfig | null;

const set = (c: EpConfig, field: string, value: unknown): BadConfig => ({
  config: { ...c, [field]: value },
  description: `${field} = ${JSON.stringify(value) ?? String(value)}`,
});

/**
 * Mutations that break exactly one rule of `validateConfig` while staying inside the backend's
 * declared limits (so a backend that checks its limits first still owes a ConfigError).
 * A mutation returns null where it cannot apply to the base config.
 */
export const CONFIG_MUTATIONS: readonly Mutation[] = [
  (c) => (c.ranks >= 2 ? set(c, "experts", c.experts + 1) : null),
  (c, _caps, rng) => {
    const bad = Array.from({ length: c.ranks - 1 }, (_, i) => i + 2).filter((d) => c.ranks % d !== 0);
    return bad.length > 0 ? set(c, "dpSize", rng.pick(bad)) : set(c, "dpSize", c.ranks + 1);
  },
  (c, caps) => (c.experts + 1 <= caps.maxTopK ? set(c, "topK", c.experts + 1) : set(c, "topK", 0)),
  (c, _caps, rng) =>
    set(c, rng.pick(["ranks", "experts", "hidden", "maxTokensPerRank", "expertAlignment"]), 0),
  (c, _caps, rng) =>
    set(c, rng.pick(["topK", "hidden", "maxTokensPerRank"]), rng.pick([-1, 1.5, Number.NaN])),
  (c, _caps, rng) => set(c, "layout", rng.pick(["dense", "", "MASKED"])),
  (c, _caps, rng) => set(c, rng.pick(["inputDtype", "dispatchDtype"]), rng.pick(["fp16", "fp8", "e4m3"])),
  (c, caps) =>
    caps.inputDtypes.includes("fp8-e4m3") && c.hidden % 128 === 0
      ? {
          config: { ...c, inputDtype: "fp8-e4m3", dispatchDtype: "bf16" },
          description: "fp8 input with bf16 dispatch",
        }
      : null,
  (c) => set(c, "expertsPerRank", c.experts / c.ranks),
];

/** Applies the `pick`-th applicable mutation (cyclically) to a valid config. */
export function badConfig(c: EpConfig, caps: Capabilities, pick: number, rng: Rng): BadConfig {
  for (let i = 0; i < CONFIG_MUTATIONS.length; i++) {
    const bad = CONFIG_MUTATIONS[(pick + i) % CONFIG_MUTATIONS.length](c, caps, rng);
    if (bad !== null) return bad;
  }
  throw new Error("badConfig: no mutation applies");
}
