import type { EpConfig } from "@switchyard/core";
import type { Rng } from "../harness/rng.js";
import { CONFIG_FIELDS } from "./configOracle.js";
import { oddValue } from "./values.js";

/** A plausible value for a config field: near-valid integers, the other dtype or layout, typos. */
function nearValue(field: string, c: EpConfig, rng: Rng): unknown {
  switch (field) {
    case "inputDtype":
    case "dispatchDtype":
      return rng.pick(["bf16", "fp8-e4m3", "fp8", "BF16", "fp16"]);
    case "layout":
      return rng.pick(["masked", "contiguous", "dense", "MASKED"]);
    case "scaleFormat":
      return rng.pick(["pow2", "amax", "ue8m0", "e8m0", "UE8M0", undefined]);
    case "combineWeights":
      return rng.pick(["expert", "home", "Home", "rank", undefined]);
    default: {
      const v = c[field as keyof EpConfig] as number;
      return rng.pick([v + 1, v - 1, v * 2, Math.max(1, Math.floor(v / 2)), 1, 128, 3, 4096, 4097]);
    }
  }
}

/**
 * A config input derived from a valid one by 1-3 random edits: a field set to an odd value
 * (`oddValue`) or a near-valid one, a field deleted, an unknown field added, or the whole input
 * replaced by a non-object. Some edits leave it valid; the oracle decides.
 */
export function mutateConfig(valid: EpConfig, rng: Rng): { input: unknown; edits: string[] } {
  if (rng.chance(0.05)) {
    const input = rng.pick<unknown>([null, undefined, 7, "config", [], [1, 2]]);
    return { input, edits: ["not an object"] };
  }
  const c: Record<string, unknown> = { ...valid };
  const edits: string[] = [];
  for (let n = rng.int(1, 3); n > 0; n--) {
    const field = rng.pick(CONFIG_FIELDS);
    const what = rng.int(0, 9);
    if (what < 4) {
      c[field] = oddValue(rng);
      edits.push(`${field} odd`);
    } else if (what < 8) {
      c[field] = nearValue(field, valid, rng);
      edits.push(`${field} near`);
    } else if (what < 9) {
      delete c[field];
      edits.push(`${field} deleted`);
    } else {
      c[rng.pick(["expertsPerRank", "world", "tp", "Ranks"])] = 1;
      edits.push("unknown field");
    }
  }
  return { input: c, edits };
}
