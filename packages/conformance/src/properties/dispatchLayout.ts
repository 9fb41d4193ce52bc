import type { LayoutKind } from "@switchyard/core";
import { describeWorld, worldArb } from "../generators/world.js";
import { runAndVerify } from "../harness/steps.js";
import { defineProperty } from "../property.js";

function layoutProperty(layout: LayoutKind, summary: string) {
  return defineProperty({
    name: `dispatch/layout/${layout}`,
    required: false,
    summary,
    wants: { layouts: [layout] },
    arbitrary: (space) => worldArb(space),
    check: (ctx, c) => runAndVerify(ctx, c, { rows: true, layout: true }),
    describe: describeWorld,
  });
}

/** masked: expert e's block starts at e*R*M, its rows packed at the front. */
export const dispatchLayoutMasked = layoutProperty(
  "masked",
  "masked layout: expertOffsets[e] = e*R*M, each expert's rows packed at the front of its block",
);

/** contiguous: blocks padded to expertAlignment, offsets are the padded prefix sums, padding meta -1. */
export const dispatchLayoutContiguous = layoutProperty(
  "contiguous",
  "contiguous layout: blocks padded to expertAlignment, expertOffsets = padded prefix sums, padding rows meta srcRank -1",
);
