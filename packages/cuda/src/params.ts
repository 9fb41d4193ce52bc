import { type Layout, layoutParams, PARAM_NAMES } from "@switchyard/core";

/**
 * Core's parameter block as the kernels take it: u64 in PARAM_NAMES order (SyParams in
 * src/native/kernels/params.cuh). Values are exact integers below 2^53.
 */
export function packParams(layout: Layout): BigUint64Array {
  const values = layoutParams(layout);
  if (values.length !== PARAM_NAMES.length) {
    throw new Error(
      `packParams: layoutParams gave ${values.length} values, PARAM_NAMES has ${PARAM_NAMES.length}`,
    );
  }
  return BigUint64Array.from(values, (v) => {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`packParams: ${v} is not a u64`);
    return BigInt(v);
  });
}
