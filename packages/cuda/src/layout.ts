import { computeLayout, type EpConfig, type Layout } from "@switchyard/core";

/**
 * The layout a CUDA endpoint of this config uses: core's, unchanged (protocol version 2 has no
 * staging to bound). What its kernels read, what it allocates, and what heaps and memory reports
 * are sized from.
 */
export function endpointLayout(config: Readonly<EpConfig>): Layout {
  return computeLayout(config);
}
