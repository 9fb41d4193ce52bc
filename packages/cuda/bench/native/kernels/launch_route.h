// Host entry points of the NCCL baseline's route and compaction (route.cu, baseline.cu):
// version 1's contiguous row order (one row per (token, expert), staged per destination, then laid
// out per expert), which is what one writes without a special library. The NVSHMEM endpoint's
// kernels do not use them (launch.h).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "context.cuh"

namespace sy {

/// Shared memory the route kernel may use for its masks (sets the chunk size, routeWarps()).
constexpr int kRouteSmemBytes = 40 * 1024;
/// Threads per block of the baseline's copy kernels (pack, compaction, gather).
constexpr int kContigThreads = 512;

/// Route (route.cu): localPos, chunkCount (as prefix), regionBase, regionTotal, staged of
/// ctx.contig for topkIdx [T, topK].
cudaError_t launchRoute(const BaselineCtx& ctx, const int32_t* topkIdx, int numTokens, cudaStream_t stream);

/// Staging [R, C, ...] -> compact output [N, ...] through the receive tables of `tables`
/// (baseline.cu). Rows of the padded blocks past an expert's count are padding: meta (-1, -1, -1,
/// e), payload and scales left as they are (the protocol leaves them unspecified).
struct CompactArgs {
  const uint8_t* stageX;       ///< [R * C, rowBytes]
  const uint8_t* stageScales;  ///< [R * C, S * 4] or null
  const uint8_t* stageMeta;    ///< [R * C, 16]
  uint8_t* outX;               ///< [N, rowBytes]
  uint8_t* outScales;          ///< [N, S * 4] or null
  uint8_t* outMeta;            ///< [N, 16]
  uint32_t rowBytes;
  uint32_t scaleBytes;
  int L, R;
  SyContig tables;             ///< offsets, expertCount, pairStart, stageStart, blocks
};
cudaError_t launchCompact(const CompactArgs& a, cudaStream_t stream);

}  // namespace sy
