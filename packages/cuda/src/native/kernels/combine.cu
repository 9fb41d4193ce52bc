// The combine kernels (both layouts): a kernel a stage (combine_send, combine_recv) for the stage
// calls, and `combine`, one kernel function for either stage or both in one launch.
//
// `combine` runs `phases` 1 send, 2 receive, 3 both (sy_combine: one launch a half). Each stage
// runs on blocks [0, its blocks) of the grid, the larger of the two; with both, a block runs the
// send, then the receive, which waits for this rank's own send too: both grids then stay within
// one wave (ctx.maxBlocks), so every block is resident at once. Instantiated for the put path
// (kPuts) and the weights at home (kHome), both fixed for an endpoint, so a profile shows one
// "combine" kernel whichever halves a launch runs; the stage calls launch it too when the runtime
// asks for a kernel per half (ctx.kernelPerHalf), else their stage's own kernel (its registers to
// itself, as dispatch.cu says).
#include "combine_recv.cuh"
#include "combine_send.cuh"
#include "launch.h"
#include "stage.cuh"

namespace sy {
namespace {

constexpr int kThreads = kStageThreads;
constexpr int kWarps = kThreads / kWarp;
constexpr int kOutPerPiece = 512;  // outputs of one work item (as in both stages)

}  // namespace

// Named (not anonymous): a profiler shows the kernel as sy::kernels::combine (an anonymous
// namespace would leave it a mangled, unreadable name with relocatable device code).
namespace kernels {

/// What combine reads and writes (the caller's tensors).
struct CombineInputs {
  const uint16_t* expertOut;
  const int32_t* topkIdx;
  const float* homeWeights;
  uint16_t* y;
  int tokens;
  bool namedBlock;  ///< combine recv checks the rows named on a block of its own
};

template <bool kPuts, bool kHome>
__global__ void __launch_bounds__(kThreads) combine(SyCtx c, CombineInputs in, int sendBlocks, int recvBlocks, int phases) {
  const int b = static_cast<int>(blockIdx.x);
  if ((phases & 1) != 0 && b < sendBlocks) combine_send_stage::run<kPuts>(c, in.expertOut, sendBlocks, b);
  if (phases == 3) __syncthreads();
  if ((phases & 2) != 0 && b < recvBlocks) {
    combine_recv_stage::run<kHome>(c, in.topkIdx, in.homeWeights, in.tokens, in.y, in.namedBlock, recvBlocks, b);
  }
}

/// Combine send alone (a stage call): grid = the send's blocks.
template <bool kPuts>
__global__ void __launch_bounds__(kThreads) combine_send(SyCtx c, CombineInputs in) {
  combine_send_stage::run<kPuts, true>(c, in.expertOut, static_cast<int>(gridDim.x), static_cast<int>(blockIdx.x));
}

/// Combine recv alone (a stage call): grid = the receive's blocks.
template <bool kHome>
__global__ void __launch_bounds__(kThreads) combine_recv(SyCtx c, CombineInputs in) {
  combine_recv_stage::run<kHome>(c, in.topkIdx, in.homeWeights, in.tokens, in.y, in.namedBlock,
                                 static_cast<int>(gridDim.x), static_cast<int>(blockIdx.x));
}

/// Combine recv alone on blocks of kWideThreads (a stage call under an SM budget, weights with the
/// expert ranks, at most 4 ranks: wideReceive).
__global__ void __launch_bounds__(combine_recv_stage::kWideThreads) combine_recv_wide(SyCtx c, CombineInputs in) {
  combine_recv_stage::run<false, combine_recv_stage::kWideThreads>(c, in.topkIdx, in.homeWeights, in.tokens, in.y,
                                                                  in.namedBlock, static_cast<int>(gridDim.x),
                                                                  static_cast<int>(blockIdx.x));
}

}  // namespace kernels

namespace {

/// The receive alone under an SM budget, its weights with the expert ranks and a token's partials
/// from no more ranks than a wide block's batches sum: blocks of kWideThreads.
bool wideReceive(const SyCtx& ctx, int budget, int phases) {
  return phases == 2 && !ctx.kernelPerHalf && budget > 0 && !ctx.p.combineAtHome() &&
         ctx.p.ranks() <= batchSources(combine_recv_stage::kWideBatch);
}

/// The receive's grid: workers, one check block and (without an SM budget) one for the rows-named
/// comparison. With both halves in one launch, the workers leave room for those within one wave.
/// `warps`: a block's (its first polls).
int recvGrid(const SyCtx& ctx, int numTokens, int budget, bool both, int warps, bool* namedBlock) {
  const uint64_t items = static_cast<uint64_t>(numTokens) * ((ctx.p.hidden() + kOutPerPiece - 1) / kOutPerPiece);
  *namedBlock = budget <= 0;
  const int extra = 1 + (*namedBlock ? 1 : 0);
  int limit = budget > 1 ? budget - 1 : budget;
  if (both && limit <= 0) limit = ctx.maxBlocks - extra > 1 ? ctx.maxBlocks - extra : 1;
  // stageBlocks counts kWarps-warp blocks: the items scaled to a block of `warps` warps, less its poller.
  return stageBlocks(ctx, items * kWarps / (warps - 1), limit) + extra;
}

/// The dynamic shared memory combine send's kernel asks for: ringSmemBytes when it was built for
/// sm_90 or later (older builds sum through registers: 0) and the rings fit beside the kernel's
/// static shared memory within what a block may opt into; -1 when they do not (the caller then
/// runs the send through registers). kernelRoom finds that once a device and kernel.
int ringSmem(const void* kernel) {
  const KernelRoom r = kernelRoom(kernel);
  if (r.room < 0) return -1;
  if (r.arch < 90) return 0;
  return ringSmemBytes(kThreads) <= r.room ? ringSmemBytes(kThreads) : -1;
}

}  // namespace

cudaError_t launchCombine(const SyCtx& ctx, const void* expertOut, const int32_t* topkIdx, const float* homeWeights,
                          int numTokens, void* y, int budget, int phases, cudaStream_t stream) {
  const SyParams& p = ctx.p;
  kernels::CombineInputs in{static_cast<const uint16_t*>(expertOut), topkIdx, homeWeights, static_cast<uint16_t*>(y), numTokens,
                   false};
  int sendBlocks = 0, recvBlocks = 0;
  if ((phases & 1) != 0) {
    const uint64_t most = static_cast<uint64_t>(p.ranks()) * p.maxTokens() * ((p.hidden() + kOutPerPiece - 1) / kOutPerPiece);
    // Items for at most two rounds of one block's warps take one block: a second block costs its
    // preamble, a fence and the grid's counter before the signals, more than a second round of sums.
    sendBlocks = most <= 2 * static_cast<uint64_t>(kWarps) ? 1 : stageBlocks(ctx, most, budget);
  }
  const bool wide = wideReceive(ctx, budget, phases);
  if ((phases & 2) != 0) {
    recvBlocks = recvGrid(ctx, numTokens, budget, phases == 3, wide ? combine_recv_stage::kWideThreads / kWarp : kWarps,
                          &in.namedBlock);
  }
  const int blocks = sendBlocks > recvBlocks ? sendBlocks : recvBlocks;
  const bool home = p.combineAtHome();
  if (phases == 3 || ctx.kernelPerHalf) {
    auto kernel = ctx.puts ? (home ? kernels::combine<true, true> : kernels::combine<true, false>)
                           : (home ? kernels::combine<false, true> : kernels::combine<false, false>);
    kernel<<<blocks, kThreads, 0, stream>>>(ctx, in, sendBlocks, recvBlocks, phases);
  } else if (phases == 1) {  // the sums' rings in dynamic shared memory (ring_sums.cuh)
    auto kernel = ctx.puts ? kernels::combine_send<true> : kernels::combine_send<false>;
    const int smem = ringSmem(reinterpret_cast<const void*>(kernel));
    if (smem < 0) {  // no room for the rings on this device: the one function's send, through registers
      auto one = ctx.puts ? (home ? kernels::combine<true, true> : kernels::combine<true, false>)
                          : (home ? kernels::combine<false, true> : kernels::combine<false, false>);
      one<<<blocks, kThreads, 0, stream>>>(ctx, in, sendBlocks, recvBlocks, phases);
      return cudaGetLastError();
    }
    const cudaError_t rc = allowSmem(reinterpret_cast<const void*>(kernel), smem);
    if (rc != cudaSuccess) return rc;
    kernel<<<blocks, kThreads, smem, stream>>>(ctx, in);
  } else if (wide) {
    kernels::combine_recv_wide<<<blocks, combine_recv_stage::kWideThreads, 0, stream>>>(ctx, in);
  } else {
    auto kernel = home ? kernels::combine_recv<true> : kernels::combine_recv<false>;
    kernel<<<blocks, kThreads, 0, stream>>>(ctx, in);
  }
  return cudaGetLastError();
}

}  // namespace sy
