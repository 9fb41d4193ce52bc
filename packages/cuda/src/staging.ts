import { computeLayout, type EpConfig, type Layout } from "@switchyard/core";

/** Environment override of the contiguous layout's staging bound (tokens per round, 0 = whole step). */
export const STAGING_ENV = "SWITCHYARD_CUDA_STAGING_TOKENS";

/**
 * Default bound, used when a whole step's staging would pass DEFAULT_STAGING_BUDGET: a source
 * stages at most this many tokens on a rank at a time. At DeepSeek-like prefill sizes (hidden 7168
 * fp8, top-8, 4 ranks) that is 2 × 4 × 8192 rows ≈ 485 MB of staging per rank whatever
 * maxTokensPerRank is, instead of 4 × M × 8 rows (1.9 GB at M = 8192).
 */
export const DEFAULT_STAGING_TOKENS = 1024;

/**
 * Whole-step staging up to this many bytes per rank stays whole by default: bounded staging costs
 * time (on 4×H200 at 4096 tokens per rank it took dispatch from 2058 to 2287 µs and combine from
 * 1766 to 2353 µs, results/2026-11-22.md), so it is the default only where memory is the problem.
 */
export const DEFAULT_STAGING_BUDGET = 2 ** 30;

/**
 * Tokens per round of the contiguous layout's bounded staging for this config: the explicit
 * option, else SWITCHYARD_CUDA_STAGING_TOKENS, else DEFAULT_STAGING_TOKENS when a whole step's
 * staging (dispatchX + dispatchScales + dispatchMeta) would pass DEFAULT_STAGING_BUDGET, else 0.
 * Core's layout stages a whole step when the bound is 0 or >= maxTokensPerRank (and always for
 * the masked layout).
 */
export function stagingTokensFor(
  config: Readonly<EpConfig>,
  option?: number,
  env: NodeJS.ProcessEnv = process.env,
): number {
  let q = option;
  if (q === undefined && env[STAGING_ENV] !== undefined && env[STAGING_ENV] !== "") {
    q = Number(env[STAGING_ENV]);
    if (!Number.isInteger(q) || q < 0)
      throw new RangeError(
        `${STAGING_ENV}=${env[STAGING_ENV]}: must be a whole number of tokens per round (0 = stage a whole step)`,
      );
  }
  if (config.layout !== "contiguous") return 0;
  if (q === undefined) {
    const { regions } = computeLayout(config);
    const whole = regions.dispatchX.bytes + regions.dispatchScales.bytes + regions.dispatchMeta.bytes;
    q = whole > DEFAULT_STAGING_BUDGET ? DEFAULT_STAGING_TOKENS : 0;
  }
  if (!Number.isInteger(q) || q < 0)
    throw new RangeError(
      `stagingTokens ${q}: must be a whole number of tokens per round (0 = stage a whole step)`,
    );
  return q < config.maxTokensPerRank ? q : 0;
}

/**
 * The layout a CUDA endpoint of this config uses (core's, with stagingTokensFor's bound): what its
 * kernels read, what it allocates, and what heaps and memory reports are sized from.
 */
export function endpointLayout(
  config: Readonly<EpConfig>,
  stagingTokens?: number,
  env: NodeJS.ProcessEnv = process.env,
): Layout {
  return computeLayout(config, { stagingTokens: stagingTokensFor(config, stagingTokens, env) });
}
