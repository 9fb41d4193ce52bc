import { SCALE_FORMATS, type ScaleFormat } from "./codec/scaleFormat.js";
import { type CombineWeights, checkCombineWeights } from "./combineWeights.js";
import { DTYPES, type Dtype, FP8_BLOCK } from "./dtype.js";
import { ConfigError } from "./errors.js";

export type LayoutKind = "masked" | "contiguous";
export const LAYOUTS: readonly LayoutKind[] = ["masked", "contiguous"];

/**
 * Largest count a signal word can carry (see signal.ts): counts are stored in 21 bits as count + 1.
 * Every count of the protocol is at most maxTokensPerRank, so that is the one limit it sets.
 */
export const MAX_SIGNAL_COUNT = (1 << 21) - 2;

/**
 * One expert-parallel world. Every rank is created with the same config.
 *
 * - `ranks`: GPUs (one process each); `dpSize` of them form a DP group holding the same tokens.
 * - `experts`: routed experts in total, spread evenly over ranks (`experts % ranks == 0`).
 * - `topK`: experts per token (slots per token; -1 marks an unused slot).
 * - `hidden`: elements per token row.
 * - `maxTokensPerRank`: the most tokens any rank (any DP group) passes in one step.
 * - `inputDtype`: dtype of `x` handed to dispatch; fp8 input carries fp32 block scales.
 * - `dispatchDtype`: dtype delivered to the experts; bf16 input with fp8 dispatch is quantised on the way.
 * - `layout`: `masked` (low latency, fixed per-(expert, source) regions) or `contiguous` (compact, padded).
 * - `expertAlignment`: contiguous layout pads each expert's block to a multiple of this many rows.
 * - `scaleFormat` (fp8-e4m3 dispatch only; left out means `pow2`): how quantise-on-dispatch computes
 *   and stores the block scales, `pow2`, `amax` or `ue8m0` (codec/scaleFormat.ts, docs/protocol.md).
 *   With fp8 input it names the format of the caller's scales (ue8m0: powers of two).
 * - `combineWeights` (left out means `expert`): where combine applies the router weights.
 *   `expert`: they come with dispatch and each expert rank sends one weighted partial per
 *   (token, rank). `home` (masked layout only): dispatch takes none, the expert rank sends one
 *   unweighted row per (token, slot), and the home weights and sums them in slot order with the
 *   weights passed to `combineRecv` (combineWeights.ts, docs/protocol.md).
 */
export interface EpConfig {
  ranks: number;
  dpSize: number;
  experts: number;
  topK: number;
  hidden: number;
  maxTokensPerRank: number;
  inputDtype: Dtype;
  dispatchDtype: Dtype;
  layout: LayoutKind;
  expertAlignment: number;
  scaleFormat?: ScaleFormat;
  combineWeights?: CombineWeights;
}

/** Defaults for the optional fields of `defineConfig`. */
export const CONFIG_DEFAULTS = {
  dpSize: 1,
  inputDtype: "bf16",
  dispatchDtype: "bf16",
  layout: "masked",
  expertAlignment: 1,
} as const satisfies Partial<EpConfig>;

export type EpConfigInput = Omit<EpConfig, keyof typeof CONFIG_DEFAULTS> & Partial<EpConfig>;

/** Fills in defaults, validates, and returns a frozen config. Throws `ConfigError` on the first broken rule. */
export function defineConfig(input: EpConfigInput): Readonly<EpConfig> {
  const config: EpConfig = { ...CONFIG_DEFAULTS, ...input };
  validateConfig(config);
  return Object.freeze(config);
}

function positiveInt(config: EpConfig, field: keyof EpConfig, max = Number.MAX_SAFE_INTEGER): number {
  const v = config[field];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) {
    throw new ConfigError(field, v, `must be an integer in [1, ${max}]`);
  }
  return v;
}

/** Checks every rule of an `EpConfig`. Throws `ConfigError` naming the field, its value and the rule. */
export function validateConfig(config: EpConfig): void {
  if (config === null || typeof config !== "object") {
    throw new ConfigError("(config)", config, "must be an object");
  }
  const ranks = positiveInt(config, "ranks", 4096);
  const dpSize = positiveInt(config, "dpSize", ranks);
  const experts = positiveInt(config, "experts", 1 << 20);
  positiveInt(config, "topK", experts);
  const hidden = positiveInt(config, "hidden", 1 << 20);
  const M = config.maxTokensPerRank;
  if (typeof M === "number" && Number.isInteger(M) && M > MAX_SIGNAL_COUNT) {
    throw new ConfigError(
      "maxTokensPerRank",
      M,
      `must be at most ${MAX_SIGNAL_COUNT}: a signal word carries a count in 21 bits (count + 1); split the batch`,
    );
  }
  positiveInt(config, "maxTokensPerRank", MAX_SIGNAL_COUNT);
  positiveInt(config, "expertAlignment", 1 << 16);
  if (ranks % dpSize !== 0) {
    throw new ConfigError("dpSize", dpSize, `must divide ranks (${ranks})`);
  }
  if (experts % ranks !== 0) {
    throw new ConfigError(
      "experts",
      experts,
      `must be a multiple of ranks (${ranks}) so each rank hosts the same number`,
    );
  }
  for (const field of ["inputDtype", "dispatchDtype"] as const) {
    if (!DTYPES.includes(config[field])) {
      throw new ConfigError(field, config[field], `must be one of ${DTYPES.join(", ")}`);
    }
  }
  if (config.inputDtype === "fp8-e4m3" && config.dispatchDtype !== "fp8-e4m3") {
    throw new ConfigError(
      "dispatchDtype",
      config.dispatchDtype,
      "must be fp8-e4m3 when inputDtype is fp8-e4m3",
    );
  }
  if (config.dispatchDtype === "fp8-e4m3" && hidden % FP8_BLOCK !== 0) {
    throw new ConfigError(
      "hidden",
      hidden,
      `must be a multiple of ${FP8_BLOCK} (the fp8 scale block) for fp8`,
    );
  }
  if (config.scaleFormat !== undefined) checkScaleFormat(config);
  if (!LAYOUTS.includes(config.layout)) {
    throw new ConfigError("layout", config.layout, `must be one of ${LAYOUTS.join(", ")}`);
  }
  if (config.combineWeights !== undefined) checkCombineWeights(config);
  const known = new Set<string>([
    "ranks",
    "dpSize",
    "experts",
    "topK",
    "hidden",
    "maxTokensPerRank",
    "inputDtype",
    "dispatchDtype",
    "layout",
    "expertAlignment",
    "scaleFormat",
    "combineWeights",
  ]);
  for (const key of Object.keys(config)) {
    if (!known.has(key))
      throw new ConfigError(
        key,
        (config as unknown as Record<string, unknown>)[key],
        "is not a config field",
      );
  }
}

function checkScaleFormat(config: EpConfig): void {
  if (!SCALE_FORMATS.includes(config.scaleFormat as ScaleFormat)) {
    throw new ConfigError(
      "scaleFormat",
      config.scaleFormat,
      `must be one of ${SCALE_FORMATS.join(", ")} (or left out for pow2)`,
    );
  }
  if (config.dispatchDtype !== "fp8-e4m3") {
    throw new ConfigError(
      "scaleFormat",
      config.scaleFormat,
      `applies only to fp8-e4m3 dispatch, and dispatchDtype is ${config.dispatchDtype}: leave scaleFormat out, or set dispatchDtype to fp8-e4m3`,
    );
  }
}

/** Local experts per rank. */
export function localExperts(config: EpConfig): number {
  return config.experts / config.ranks;
}

/** Number of DP groups. */
export function dpGroups(config: EpConfig): number {
  return config.ranks / config.dpSize;
}

/** fp32 scales per row (0 unless the dtype is fp8). */
export function scalesPerRow(config: EpConfig, dtype: Dtype): number {
  return dtype === "fp8-e4m3" ? config.hidden / 128 : 0;
}
