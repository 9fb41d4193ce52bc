import { ConfigError, defineConfig, type EpConfig } from "@switchyard/core";
import { integerFlag, UsageError } from "../usage.js";

/** The demo's flag for each config field, so errors speak of what the user typed. */
const FLAG_OF: Record<string, string> = {
  ranks: "--ranks",
  dpSize: "--dp",
  experts: "--experts",
  topK: "--topk",
  hidden: "--hidden",
  maxTokensPerRank: "--tokens",
  layout: "--layout",
  dispatchDtype: "--fp8",
  expertAlignment: "--layout",
  combineWeights: "--combine-weights",
};

/** A ConfigError's rule with the config fields it mentions ("ranks (4)") named by their flags. */
function inFlags(rule: string): string {
  return rule.replace(/\b(\w+) \(/g, (m, field: string) => (FLAG_OF[field] ? `${FLAG_OF[field]} (` : m));
}

export interface DemoFlags {
  ranks: string;
  experts: string;
  topk: string;
  hidden: string;
  tokens: string;
  dp: string;
  layout: string;
  fp8: boolean;
  /** Left out: the config leaves combineWeights out (expert). */
  "combine-weights"?: string;
  seed: string;
}

/** The demo's config from its flags; a UsageError naming the flag (never a config field) otherwise. */
export function demoConfig(values: DemoFlags): { config: EpConfig; tokens: number; seed: number } {
  const n = (flag: string, v: string) => integerFlag(flag, v, 1)!;
  const tokens = n("--tokens", values.tokens);
  const seed = integerFlag("--seed", values.seed)!;
  const layout = values.layout as EpConfig["layout"];
  try {
    const config = defineConfig({
      ranks: n("--ranks", values.ranks),
      dpSize: n("--dp", values.dp),
      experts: n("--experts", values.experts),
      topK: n("--topk", values.topk),
      hidden: n("--hidden", values.hidden),
      maxTokensPerRank: tokens,
      dispatchDtype: values.fp8 ? "fp8-e4m3" : "bf16",
      layout,
      expertAlignment: layout === "contiguous" ? 16 : 1,
      ...(values["combine-weights"] === undefined
        ? {}
        : { combineWeights: values["combine-weights"] as EpConfig["combineWeights"] }),
    });
    return { config, tokens, seed };
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const flag = FLAG_OF[e.field] ?? e.field;
    const value = e.field === "dispatchDtype" ? "" : ` ${String(e.value)}`;
    throw new UsageError(`${flag}${value}: ${inFlags(e.rule)}`);
  }
}
