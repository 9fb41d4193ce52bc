import { type EpConfig, UnsupportedError } from "@switchyard/core";

/** Environment default of the contiguous layout's output mode ("worst-case" or "exact"). */
export const OUTPUT_ENV = "SWITCHYARD_CUDA_OUTPUT";

/**
 * Where a contiguous endpoint's dispatch receive puts its rows. "worst-case": the endpoint's own
 * recvX / recvScales sized for the layout's N rows; no host synchronisation, so a step can be
 * captured into a CUDA graph. "exact": the caller's buffers of exactly the step's rows, after one
 * host synchronisation (`dispatchRecvRows`); saves N × (hidden + scales) bytes per rank, cannot
 * be captured. The masked layout has fixed regions and only "worst-case".
 */
export type OutputMode = "worst-case" | "exact";

const MODES: readonly OutputMode[] = ["worst-case", "exact"];

/**
 * The output mode of an endpoint for this config: the explicit option, else SWITCHYARD_CUDA_OUTPUT
 * (a default for contiguous endpoints; masked ones stay "worst-case"), else "worst-case".
 */
export function outputModeFor(
  config: Readonly<EpConfig>,
  option?: OutputMode,
  env: NodeJS.ProcessEnv = process.env,
): OutputMode {
  if (option !== undefined) {
    if (!MODES.includes(option))
      throw new RangeError(`output "${option}": must be one of ${MODES.map((m) => `"${m}"`).join(", ")}`);
    if (option === "exact" && config.layout !== "contiguous")
      throw new UnsupportedError(
        "cuda",
        `output "exact" for the ${config.layout} layout (exact-size output is a mode of the contiguous layout; the masked layout's regions are fixed)`,
      );
    return option;
  }
  const v = env[OUTPUT_ENV];
  if (v === undefined || v === "") return "worst-case";
  if (!MODES.includes(v as OutputMode))
    throw new RangeError(`${OUTPUT_ENV}=${v}: must be one of ${MODES.map((m) => `"${m}"`).join(", ")}`);
  return config.layout === "contiguous" ? (v as OutputMode) : "worst-case";
}
