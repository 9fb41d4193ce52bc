import { computeLayout, type EpConfig, type RankInput, referenceDispatch } from "@switchyard/core";
import { checkCombine } from "./checkCombine.js";
import { checkDispatchRows, checkLayoutStructure, checkRowOrder } from "./checkDispatch.js";
import type { StepOutcome } from "./drive.js";
import { expectedProvenanceOutputs } from "./experts.js";
import { Problems } from "./problems.js";

/** Which parts of a step's outcome to check against the reference. */
export interface VerifyOptions {
  /** Rows, counts and provenance (as sets). */
  rows?: boolean;
  /** Payload and scales bit-exact (implies rows). */
  payload?: boolean;
  /** The layout's documented offsets and padding. */
  layout?: boolean;
  /** The documented row order. */
  order?: boolean;
  /** Combined output (provenance experts) within the combine bound. */
  combine?: boolean;
}

/** Checks a step run with provenance experts; throws a `ConformanceMismatch` listing every problem. */
export function verifyStep(
  config: EpConfig,
  inputs: RankInput[],
  outcome: StepOutcome,
  options: VerifyOptions,
  label = "step",
): void {
  const layout = computeLayout(config);
  const problems = new Problems();
  const expected = referenceDispatch(config, inputs);
  outcome.dispatch.forEach((result, rank) => {
    if (options.rows || options.payload)
      checkDispatchRows(config, layout, rank, result, expected[rank], problems, {
        payload: !!options.payload,
      });
    if (options.layout) checkLayoutStructure(config, layout, rank, result, expected[rank], problems);
    if (options.order) checkRowOrder(config, layout, rank, result, problems);
  });
  if (options.combine)
    checkCombine(config, inputs, outcome.y, expectedProvenanceOutputs(config, inputs), problems);
  problems.throwIfAny(label);
}
