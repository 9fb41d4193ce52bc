import { type EpConfig, UnsupportedError } from "@switchyard/core";

/**
 * The environment variable command-line tools read for a default output mode ("worst-case" or
 * "exact"); the library itself reads no environment (`parseOutputMode` parses the value).
 */
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
 * The output mode of an endpoint for this config: the explicit option, else "worst-case".
 * "exact" is refused for the masked layout (`UnsupportedError`).
 */
export function outputModeFor(config: Readonly<EpConfig>, option?: OutputMode): OutputMode {
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
  return "worst-case";
}

/**
 * A command line's output mode from `value` (e.g. the SWITCHYARD_CUDA_OUTPUT variable): undefined
 * for unset or empty, else the mode; `RangeError` naming `what` for anything else.
 */
export function parseOutputMode(value: string | undefined, what = OUTPUT_ENV): OutputMode | undefined {
  if (value === undefined || value === "") return undefined;
  if (!MODES.includes(value as OutputMode))
    throw new RangeError(`${what}=${value}: must be one of ${MODES.map((m) => `"${m}"`).join(", ")}`);
  return value as OutputMode;
}
