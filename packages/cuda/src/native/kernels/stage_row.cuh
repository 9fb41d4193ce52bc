// One staged row of the contiguous layout, written by a warp into a destination's heap (the
// whole-step send and bounded staging's round sender share it): the token's payload, its fp8 block
// scales when the dispatch dtype has them, and its meta word.
#pragma once
#include <cstdint>

#include "copy.cuh"
#include "params.cuh"

namespace sy {

/// The warp copies token t of x / scales into staging row `row` of the heap at `base` (dispatchX,
/// dispatchScales, dispatchMeta at core's offsets); lane 0 writes `meta`.
__device__ inline void stageRow(const SyParams& p, uint8_t* base, uint64_t row, const uint8_t* x, const float* scales,
                                int t, int4 meta, int lane) {
  const uint64_t rowBytes = p.rowBytes();
  const uint64_t scaleBytes = static_cast<uint64_t>(p.scalesPerRow()) * 4;
  warpCopy(base + p.offset(R_DISPATCH_X) + row * rowBytes, x + static_cast<uint64_t>(t) * rowBytes, rowBytes, lane);
  if (scaleBytes) {
    warpCopy(base + p.offset(R_DISPATCH_SCALES) + row * scaleBytes,
             reinterpret_cast<const uint8_t*>(scales) + static_cast<uint64_t>(t) * scaleBytes, scaleBytes, lane);
  }
  if (lane == 0) reinterpret_cast<int4*>(base + p.offset(R_DISPATCH_META))[row] = meta;
}

}  // namespace sy
