import { type ScaleFormat, scaleFormatOf } from "./codec/scaleFormat.js";
import { type CombineWeights, combineWeightsOf } from "./combineWeights.js";
import type { EpConfig } from "./config.js";
import { UnsupportedError } from "./errors.js";

/** The optional config modes a backend runs (the same lists its `Capabilities` declare). */
export interface DeclaredOptions {
  readonly scaleFormats: readonly ScaleFormat[];
  readonly combineWeights: readonly CombineWeights[];
}

/**
 * Throws UnsupportedError (naming the field, the value, what the backend runs and what to do)
 * unless the config's scaleFormat and combineWeights are among what `backend` declares. Backends
 * call it where a session or endpoint is made, before anything is allocated.
 */
export function refuseUndeclared(
  backend: string,
  declared: DeclaredOptions,
  config: Pick<EpConfig, "scaleFormat" | "combineWeights">,
): void {
  const checks: [string, string, readonly string[]][] = [
    ["scaleFormat", scaleFormatOf(config), declared.scaleFormats],
    ["combineWeights", combineWeightsOf(config), declared.combineWeights],
  ];
  for (const [field, value, runs] of checks) {
    if (!runs.includes(value)) {
      throw new UnsupportedError(
        backend,
        `${field} "${value}" (EpConfig.${field}): it runs ${runs.join(", ")}; set ${field} to one of those, or use the reference backend for ${value}`,
      );
    }
  }
}
