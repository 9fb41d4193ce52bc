// Host entry points of the NCCL baseline's local kernels (baseline.cu). The baseline shares the
// contiguous layout's route (row order) and compaction with the NVSHMEM path; these three are
// its own: packing rows per destination, gathering expert outputs back per source, and the
// weighted sum over the returned rows.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "context.cuh"

namespace sy {

/// x [T, hidden] (dispatch dtype), scales [T, hidden / 128] -> send* [R, C, ...] at [dst][routeRow].
cudaError_t launchBaselinePack(const BaselineCtx& ctx, const uint8_t* x, const float* scales, const int32_t* topkIdx,
                               int numTokens, uint8_t* sendX, uint8_t* sendScales, uint8_t* sendMeta,
                               cudaStream_t stream);

/// expertOut [N, hidden] bf16 -> backSend [R, C, hidden]: compact row (e, s, i) to row stageStart[e][s] + i.
cudaError_t launchBaselineGather(const BaselineCtx& ctx, const uint8_t* outMeta, const uint8_t* expertOut,
                                 uint8_t* backSend, cudaStream_t stream);

/// y[t] = bf16(sum_k fp32(w[t][k] * backRecv[dst(k) * C + routeRow(t, k)])) in slot order.
cudaError_t launchBaselineReduce(const BaselineCtx& ctx, const int32_t* topkIdx, const float* topkWeights, int numTokens,
                                 const uint8_t* backRecv, void* y, cudaStream_t stream);

/// bf16 -> fp8 (quantize.cu): x [T, hidden] bf16 into ctx.quantX / quantScales; at most maxBlocks blocks (0: no limit).
cudaError_t launchQuantize(const BaselineCtx& ctx, const void* x, int numTokens, int maxBlocks, cudaStream_t stream);

}  // namespace sy
