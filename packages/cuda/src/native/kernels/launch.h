// Host entry points of the four stage kernels (one .cu file each). All are asynchronous on `stream`
// and never synchronise, so a whole step can be captured into a CUDA graph.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "params.cuh"

namespace sy {

/// Threads per block of dispatch send (also the token chunk its scan covers per pass).
constexpr int kDispatchSendThreads = 512;

/// bf16 -> fp8 (quantize.cu): x [T, hidden] bf16 into ctx.quantX [T, hidden] / ctx.quantScales [T, hidden / 128].
/// maxBlocks > 0 caps the grid (the contiguous layout's SM budget); 0 = one pass.
cudaError_t launchQuantize(const SyCtx& ctx, const void* x, int numTokens, int maxBlocks, cudaStream_t stream);

/// x [T, hidden] (input dtype), scales [T, hidden/128] fp32 (fp8 input only, else null), topkIdx [T, topK] i32.
cudaError_t launchDispatchSend(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                               int numTokens, cudaStream_t stream);

/// Waits for every (local expert, source) signal; writes ctx.counts [localExperts, ranks].
cudaError_t launchDispatchRecv(const SyCtx& ctx, cudaStream_t stream);

/// expertOut [rows, hidden] bf16, rows aligned with dispatchX's rows (rows = L * R * M).
cudaError_t launchCombineSend(const SyCtx& ctx, const void* expertOut, int blocks, cudaStream_t stream);

/// topkIdx / topkWeights [T, topK]; y [T, hidden] bf16 out. Advances the step counter at its end.
cudaError_t launchCombineRecv(const SyCtx& ctx, const int32_t* topkIdx, const float* topkWeights, int numTokens,
                              void* y, cudaStream_t stream);

/// Blocks of dispatch send / combine send one SM holds at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor):
/// the endpoint sizes their grids to one wave, since a second wave repeats every block's latency chain
/// (scan, copy, system fence, signal) after the first.
cudaError_t dispatchSendOccupancy(int* blocksPerSm);
cudaError_t combineSendOccupancy(int* blocksPerSm);

}  // namespace sy
