// Host entry points of the contiguous layout's kernels (one .cu file per stage) and of the
// helpers the NCCL baseline shares with them. All are asynchronous on `stream`, never synchronise
// the host, and take their sizes from the parameter block and ctx.contig (contiguous.cuh).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "params.cuh"

namespace sy {

/// Loads kernels now (cudaFuncGetAttributes) instead of at their first launch. With CUDA's lazy
/// loading (the default) a first launch may wait for the running kernels to finish; bounded
/// staging's round sender runs across the step and waits for this rank's own receive kernels,
/// so those must be loaded before it starts.
template <typename... Kernel>
cudaError_t loadKernels(Kernel... kernels) {
  cudaFuncAttributes a{};
  cudaError_t rc = cudaSuccess;
  ((rc = rc == cudaSuccess ? cudaFuncGetAttributes(&a, kernels) : rc), ...);
  return rc;
}

/// The kernels bounded staging launches loaded (each .cu file loads its own).
cudaError_t loadQuantizeKernels();
cudaError_t loadRouteKernels();
cudaError_t loadDispatchRecvContiguousKernels();
cudaError_t loadRoundKernels();
cudaError_t loadRoundSendKernels();
cudaError_t loadCombineSendContiguousKernels();
cudaError_t loadCombineRecvContiguousKernels();

/// Shared memory the route kernel may use for its masks (sets the chunk size, routeWarps()).
constexpr int kRouteSmemBytes = 40 * 1024;
/// Threads per block of the copy kernels of the contiguous layout (send, compaction, combine send).
constexpr int kContigThreads = 512;
/// Threads per block of the contiguous combine receive (one warp per token).
constexpr int kContigReduceThreads = 1024;

/// Route (dispatch_route.cu): localPos, chunkCount (as prefix), regionBase, regionTotal, staged of
/// ctx.contig for topkIdx [T, topK]. With countSignals, the last block also writes this rank's
/// per-expert counts into every destination's countSignal [R, L] at [rank][e].
cudaError_t launchRoute(const SyCtx& ctx, const int32_t* topkIdx, int numTokens, bool countSignals,
                        cudaStream_t stream);

/// Bounded staging's own stream: dispatch send forks the round sender onto it after the route
/// (`fork`), and records `join` after it; combine recv makes the caller's stream wait for `join`.
struct RoundStream {
  cudaStream_t stream;
  cudaEvent_t fork;
  cudaEvent_t join;
};

/// Dispatch send (dispatch_send_contiguous.cu): quantise (bf16 -> fp8), route, then every row into
/// its destination's staging dispatchX / dispatchScales / dispatchMeta [R, C, ...] at [rank][row],
/// and one dispatchSignal [R] word per destination after all of them. With bounded staging
/// (stagingTokens > 0) the rows go instead through the round sender, forked onto `rounds`.
cudaError_t launchDispatchSendContiguous(const SyCtx& ctx, const void* x, const float* scales,
                                         const int32_t* topkIdx, int numTokens, cudaStream_t stream,
                                         const RoundStream& rounds);

/// Bounded staging's sender (dispatch_send_rounds.cu): every round of x / scales to every
/// destination, each destination at the pace of its credits. Runs until the last destination
/// consumed the last round, so it goes on a stream of its own.
cudaError_t launchDispatchSendRounds(const SyCtx& ctx, const uint8_t* x, const float* scales, const int32_t* topkIdx,
                                     int numTokens, cudaStream_t stream);

/// Staging [R, C, ...] -> compact output [N, ...] through the receive tables of `tables`
/// (dispatch_recv_contiguous.cu). Rows of the padded blocks past an expert's count are padding:
/// zero payload and scales, meta (-1, -1, -1, e).
struct CompactArgs {
  const uint8_t* stageX;    ///< [R * C, rowBytes]
  const uint8_t* stageScales;  ///< [R * C, S * 4] or null
  const uint8_t* stageMeta;    ///< [R * C, 16]
  uint8_t* outX;            ///< [N, rowBytes]
  uint8_t* outScales;       ///< [N, S * 4] or null
  uint8_t* outMeta;         ///< [N, 16]
  uint32_t rowBytes;
  uint32_t scaleBytes;
  int L, R;
  SyContig tables;          ///< offsets, expertCount, pairStart, stageStart, blocks
  bool padOnly;             ///< write the padding rows only (bounded staging places the others)
};
cudaError_t launchCompact(const CompactArgs& a, cudaStream_t stream);

/// Dispatch receive's wait (dispatch_recv_contiguous.cu): waits for every source's count signals
/// (and, with whole-step staging, its dispatchSignal), checks them, writes ctx.counts [L, R] and
/// the receive tables; offsets[L] is then the padded total of rows.
cudaError_t launchDispatchRecvWait(const SyCtx& ctx, cudaStream_t stream);

/// Dispatch receive's placement, after the wait: every row to ctx.contig.recvX / recvScales /
/// recvMeta, padding included. Whole-step staging compacts; bounded staging writes the padding
/// rows, then receives each round (dispatch_recv_rounds.cu).
cudaError_t launchDispatchRecvPlace(const SyCtx& ctx, cudaStream_t stream);

/// Dispatch receive: the wait, then the placement.
cudaError_t launchDispatchRecvContiguous(const SyCtx& ctx, cudaStream_t stream);

/// One round of bounded staging's receive (dispatch_recv_rounds.cu): buffer round % 2's rows to
/// their final places, then the buffer back to its sources.
cudaError_t launchDispatchRecvRound(const SyCtx& ctx, int round, cudaStream_t stream);

/// Combine send (combine_send_contiguous.cu): every compact row with data back to
/// combineX[token][slot] on each rank of its source's DP group, then one combineSignal per home.
cudaError_t launchCombineSendContiguous(const SyCtx& ctx, const void* expertOut, cudaStream_t stream);

/// Combine receive (combine_recv_contiguous.cu): the masked stage's semantics (same signals, same
/// bit-exact weighted sum) on ctx.contig.blocks blocks of one warp per token.
cudaError_t launchCombineRecvContiguous(const SyCtx& ctx, const int32_t* topkIdx, const float* topkWeights,
                                        int numTokens, void* y, cudaStream_t stream);

}  // namespace sy
