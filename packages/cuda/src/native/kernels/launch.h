// Host entry points of the stage kernels (one .cu file each, per layout where they differ). All
// are asynchronous on `stream` and never synchronise, so a whole step can be captured into a CUDA
// graph. Masked dispatch and both layouts' combine launch a kernel a stage for one stage, and their
// half's one kernel function for both (or for one under ctx.kernelPerHalf); the contiguous
// dispatch has a kernel a stage.
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

/// The masked dispatch (dispatch.cu): `phases` 1 dispatch send, 2 dispatch recv (each its stage's
/// kernel, or `dispatch` under ctx.kernelPerHalf), 3 both in one launch of `dispatch`. x [T, hidden] (input dtype), scales [T, hidden/128] fp32 (fp8 input only, else
/// null), topkIdx / topkWeights [T, topK] (send only). The receive waits for every source, checks
/// its signals and records, writes ctx.t and the output (recvX / recvScales / recvMeta).
/// `smallPieces`: a send sets it to its piece size's choice (payload.cuh: smallPieces), a launch of
/// the receive alone reads it, so that under ctx.kernelPerHalf both halves of a step run one
/// `dispatch` kernel (the kernels differ by the send's piece size).
cudaError_t launchDispatch(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                           const float* topkWeights, int numTokens, int phases, bool& smallPieces,
                           cudaStream_t stream);

/// The contiguous layout's dispatch send (SM budget `budget`, dispatch_send_contiguous.cu) and
/// receive (dispatch_recv_contiguous.cu): kernels of their own.
cudaError_t launchDispatchSendContiguous(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                                         const float* topkWeights, int numTokens, int budget, cudaStream_t stream);
cudaError_t launchDispatchRecvContiguous(const SyCtx& ctx, int budget, cudaStream_t stream);

/// The combine (combine.cu, both layouts): `phases` 1 combine send, 2 combine recv (each its stage's
/// kernel, or `combine` under ctx.kernelPerHalf), 3 both in one launch of `combine`. Send: expertOut [rows, hidden] bf16, row-aligned with recvX; one bf16 partial per
/// route record to every rank of the source's DP group. Receive: topkIdx [T, topK]; homeWeights
/// [T, topK] fp32 with weights at home (else null); y [T, hidden] bf16 out; advances the step
/// counter at its end. `budget`: the contiguous SM budget (0: the masked grids).
cudaError_t launchCombine(const SyCtx& ctx, const void* expertOut, const int32_t* topkIdx, const float* homeWeights,
                          int numTokens, void* y, int budget, int phases, cudaStream_t stream);

/// Blocks of a stage kernel one SM holds at once (the masked grids are sized to one wave).
cudaError_t stageOccupancy(int* blocksPerSm);

/// What a block of `kernel` may take in dynamic shared memory on the current device beside its
/// static shared memory (what a block may opt into, less its static: `room`, -1 where the
/// attributes could not be read), and the architecture it was built for (`arch`, 90 for sm_90).
/// Found once a device and kernel (launch_smem.cu).
struct KernelRoom {
  int room;
  int arch;
};
KernelRoom kernelRoom(const void* kernel);

/// Lets `kernel` take `bytes` of dynamic shared memory on the current device: the limit is set
/// once a device and kernel for the largest size asked so far, not at every launch.
cudaError_t allowSmem(const void* kernel, int bytes);

/// Forgets what kernelRoom and allowSmem found (an endpoint's start: the device may have been
/// reset since, which drops every kernel's limit).
void forgetSmem();

}  // namespace sy
