import { ResourceError } from "./errors.js";
import type { Layout } from "./layout/layout.js";

/** The most bytes the reference backend allocates for one session's heaps (all ranks) by default: 4 GiB. */
export const DEFAULT_HOST_MEMORY_LIMIT = 4 * 2 ** 30;
/** The largest ArrayBuffer a host heap may be (one rank's symmetric or local part): 4 GiB. */
export const MAX_HOST_BUFFER_BYTES = 2 ** 32;

/**
 * Refuses, with a ResourceError and before anything is allocated, a session whose heaps in host
 * memory (ArrayBuffers, one symmetric and one local per rank) would exceed `limit` in all or a
 * single buffer's maximum: a config that needs terabytes must not get as far as a RangeError from
 * the allocator, or an out-of-memory kill.
 */
export function checkHostMemory(
  backend: string,
  layout: Layout,
  ranks: number,
  limit = DEFAULT_HOST_MEMORY_LIMIT,
): void {
  const hint =
    "lower maxTokensPerRank, hidden or the experts per rank (the layout says what each region takes)";
  for (const [part, bytes] of [
    ["one rank's symmetric heap", layout.symmetricBytes],
    ["one rank's local buffers", layout.localBytes],
  ] as const) {
    if (!Number.isSafeInteger(bytes) || bytes > MAX_HOST_BUFFER_BYTES)
      throw new ResourceError(backend, part, bytes, MAX_HOST_BUFFER_BYTES, hint);
  }
  const total = ranks * layout.bytesPerRank;
  if (!Number.isSafeInteger(total) || total > limit)
    throw new ResourceError(backend, `the heaps of ${ranks} ranks`, total, limit, hint);
}
