// Host entry points of the stage kernels (one .cu file each, per layout where they differ). All
// are asynchronous on `stream` and never synchronise, so a whole step can be captured into a CUDA
// graph. One kernel per half-stage: dispatch send, dispatch recv, combine send, combine recv.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "params.cuh"

namespace sy {

/// Threads per block of every stage kernel (16 warps).
constexpr int kStageThreads = 512;

/// Grid of a stage kernel: the contiguous layout's SM budget, or the masked layout's limit
/// (ctx.maxBlocks), and never more blocks than `items` warps of work need.
int stageBlocks(const SyCtx& ctx, uint64_t items, int budget);

/// Dispatch send. x [T, hidden] (input dtype), scales [T, hidden/128] fp32 (fp8 input only, else
/// null), topkIdx / topkWeights [T, topK]. Masked: dispatch_send.cu; contiguous (SM budget
/// `budget`): dispatch_send_contiguous.cu.
cudaError_t launchDispatchSend(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                               const float* topkWeights, int numTokens, cudaStream_t stream);
cudaError_t launchDispatchSendContiguous(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                                         const float* topkWeights, int numTokens, int budget, cudaStream_t stream);

/// Dispatch receive: waits for every source, checks its signals and records, writes ctx.t and
/// the output (recvX / recvScales / recvMeta). dispatch_recv.cu, dispatch_recv_contiguous.cu.
cudaError_t launchDispatchRecv(const SyCtx& ctx, cudaStream_t stream);
cudaError_t launchDispatchRecvContiguous(const SyCtx& ctx, int budget, cudaStream_t stream);

/// Combine send (combine_send.cu, both layouts): expertOut [rows, hidden] bf16, row-aligned with
/// recvX; one bf16 partial per route record to every rank of the source's DP group.
cudaError_t launchCombineSend(const SyCtx& ctx, const void* expertOut, int budget, cudaStream_t stream);

/// Combine receive (combine_recv.cu, both layouts): topkIdx [T, topK]; homeWeights [T, topK] fp32 with
/// weights at home (else null); y [T, hidden] bf16 out. Advances the step counter at its end.
cudaError_t launchCombineRecv(const SyCtx& ctx, const int32_t* topkIdx, const float* homeWeights, int numTokens,
                              void* y, int budget, cudaStream_t stream);

/// Blocks of a stage kernel one SM holds at once (the masked grids are sized to one wave).
cudaError_t stageOccupancy(int* blocksPerSm);

}  // namespace sy
