// The masked layout's dispatch kernels: a kernel a stage (dispatch_send, dispatch_recv) for the
// stage calls, and `dispatch`, one kernel function for either stage or both in one launch.
//
// `dispatch` runs `phases` 1 send, 2 receive, 3 both (sy_dispatch: one launch a half, as an
// engine's profiler expects of a dispatch). Each stage runs on blocks [0, its blocks) of the grid,
// which is the larger of the two; with both, a block runs the send, then the receive. The receive
// waits for this rank's own send too, so every block must be resident at once: both grids are at
// most one wave (ctx.maxBlocks), and the grid is their maximum. One function for a step (its
// instance for the send's piece size, below), so a profile of a step shows one "dispatch" kernel
// whichever halves a launch runs; the stage calls launch it too when the runtime asks for a kernel
// per half (ctx.kernelPerHalf). Otherwise a stage call runs its stage's
// own kernel: compiled alone, each stage gets its registers to itself (the receive spills nothing
// there; inside the shared function it does, and runs 1 to 2 µs slower). The receive is
// instantiated for each of its two ways (kLean, dispatch_recv.cuh), fixed for an endpoint.
#include "dispatch_recv.cuh"
#include "dispatch_send.cuh"
#include "launch.h"
#include "stage.cuh"

namespace sy {

#ifdef SY_PHASE_CLOCK
__device__ unsigned long long syClockLastEndNs = 0;  // phase_clock.cuh
#endif

namespace {

constexpr int kThreads = kStageThreads;
constexpr int kWarps = kThreads / kWarp;

}  // namespace

// Named (not anonymous): a profiler shows the kernel as sy::kernels::dispatch (an anonymous
// namespace would leave it a mangled, unreadable name with relocatable device code).
namespace kernels {

/// What dispatch send reads (the caller's tensors).
struct SendInputs {
  const uint8_t* x;
  const float* scales;
  const int32_t* topkIdx;
  const float* topkWeights;
  int tokens;
  int chunk;  ///< tokens a block of the send
};

// V: the send's 16-byte vectors a lane of a piece (payload.cuh's smallPieces: 1, else kPieceVecs),
// a kernel for each, chosen on the host; a receive launched alone runs its step's send's V, so a
// step's halves under kernel_per_half are one kernel in a profile. One function holding both
// sizes' sends (a branch on a flag) had twice the code, and the send with 2 KB pieces ran about
// 10 µs slower in it (masked 256 and 512 tokens; docs/design.md).

template <bool kPuts, bool kLean, int V>
__global__ void __launch_bounds__(kThreads) dispatch(SyCtx c, SendInputs in, int sendBlocks, int recvBlocks, int phases) {
  const int b = static_cast<int>(blockIdx.x);
  if ((phases & 1) != 0 && b < sendBlocks) {
    dispatch_send_stage::run<kPuts, V>(c, in.x, in.scales, in.topkIdx, in.topkWeights, in.tokens, in.chunk, sendBlocks,
                                       b);
  }
  if (phases == 3) __syncthreads();  // the receive reuses the send's shared memory
  if ((phases & 2) != 0 && b < recvBlocks) dispatch_recv_stage::run<kLean>(c, recvBlocks, b);
}

/// Dispatch send alone (a stage call): grid = the send's blocks.
template <bool kPuts, int V>
__global__ void __launch_bounds__(kThreads) dispatch_send(SyCtx c, SendInputs in) {
  dispatch_send_stage::run<kPuts, V>(c, in.x, in.scales, in.topkIdx, in.topkWeights, in.tokens, in.chunk,
                                     static_cast<int>(gridDim.x), static_cast<int>(blockIdx.x));
}

/// Dispatch recv alone (a stage call): grid = the receive's blocks.
template <bool kLean>
__global__ void __launch_bounds__(kThreads) dispatch_recv(SyCtx c) {
  dispatch_recv_stage::run<kLean>(c, static_cast<int>(gridDim.x), static_cast<int>(blockIdx.x));
}

}  // namespace kernels

namespace {

/// The send's grid (every block has tokens; the last one ends at T), its chunk and piece size:
/// with small pieces a block a token while the tokens fit the grid (a few a block past it), else a
/// block per kWarps pieces.
void sendGrid(const SyCtx& ctx, int numTokens, int* blocks, int* chunk, bool* small) {
  *small = smallPieces(ctx.p.rowBytes(), numTokens, static_cast<uint64_t>(ctx.maxBlocks) * kWarps);
  if (*small) {
    *blocks = numTokens < ctx.maxBlocks ? numTokens : ctx.maxBlocks;
  } else {
    *blocks = stageBlocks(ctx, static_cast<uint64_t>(numTokens) * piecesPerRow(ctx.p.rowBytes()), 0);
  }
  *chunk = chunkTokens(numTokens, *blocks);
  *blocks = numTokens > 0 ? (numTokens + *chunk - 1) / *chunk : 1;
}

/// The receive's grid: the records are only known on the device, so as many blocks as the busiest
/// case needs, at most one wave; a lean receive (dispatch_recv.cuh) one more, its tables' block,
/// within the same wave.
int recvGrid(const SyCtx& ctx) {
  const SyParams& p = ctx.p;
  const uint64_t items = static_cast<uint64_t>(p.ranks()) * p.maxTokens() * piecesPerRow(p.rowBytes());
  if (!dispatch_recv_stage::leanReceive(ctx)) return stageBlocks(ctx, items, 0);
  return stageBlocks(ctx, items, ctx.maxBlocks - 1) + 1;
}

int sendSmem(const SyCtx& ctx) {
  const SyParams& p = ctx.p;
  return planSmemBytes(p.experts(), p.ranks(), p.topK()) + planEntriesSmemBytes(p.topK()) + (ctx.puts ? 8 * p.ranks() : 0);
}

int recvSmem(const SyCtx& ctx) { return recvTablesSmemBytes(ctx.p.localExperts(), ctx.p.ranks()); }

/// The half's kernel for the send's piece size V (both halves, or either, in one launch).
template <int V>
auto halfKernel(bool puts, bool lean) {
  return puts ? (lean ? kernels::dispatch<true, true, V> : kernels::dispatch<true, false, V>)
              : (lean ? kernels::dispatch<false, true, V> : kernels::dispatch<false, false, V>);
}

/// The send's own kernel for its piece size V.
template <int V>
auto sendKernel(bool puts) {
  return puts ? kernels::dispatch_send<true, V> : kernels::dispatch_send<false, V>;
}

/// Lets `kernel` have `smem` of dynamic shared memory (allowSmem) and launches it.
template <typename... Params, typename... Args>
cudaError_t launchWithSmem(void (*kernel)(Params...), int blocks, int smem, cudaStream_t stream, const Args&... args) {
  cudaError_t rc = allowSmem(reinterpret_cast<const void*>(kernel), smem);
  if (rc != cudaSuccess) return rc;
  kernel<<<blocks, kThreads, smem, stream>>>(args...);
  return cudaGetLastError();
}

}  // namespace

int stageBlocks(const SyCtx& ctx, uint64_t items, int budget) {
  const uint64_t want = (items + kWarps - 1) / kWarps;
  const int limit = budget > 0 ? budget : ctx.maxBlocks;
  return static_cast<int>(want < 1 ? 1 : (want < static_cast<uint64_t>(limit) ? want : limit));
}

cudaError_t launchDispatch(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                           const float* topkWeights, int numTokens, int phases, bool& smallPieces,
                           cudaStream_t stream) {
  const SyParams& p = ctx.p;
  kernels::SendInputs in{static_cast<const uint8_t*>(x), p.inputFp8() ? scales : nullptr, topkIdx, topkWeights, numTokens, 1};
  int sendBlocks = 0, recvBlocks = 0, smem = 0;
  bool small = smallPieces;  // a receive alone: its step's send's choice
  if ((phases & 1) != 0) {
    sendGrid(ctx, numTokens, &sendBlocks, &in.chunk, &small);
    smallPieces = small;
    smem = sendSmem(ctx);
  }
  if ((phases & 2) != 0) {
    recvBlocks = recvGrid(ctx);
    smem = smem > recvSmem(ctx) ? smem : recvSmem(ctx);
  }
  const int blocks = sendBlocks > recvBlocks ? sendBlocks : recvBlocks;
  const bool lean = dispatch_recv_stage::leanReceive(ctx);
  if (phases == 3 || ctx.kernelPerHalf) {
    auto kernel = small ? halfKernel<1>(ctx.puts, lean) : halfKernel<kPieceVecs>(ctx.puts, lean);
    return launchWithSmem(kernel, blocks, smem, stream, ctx, in, sendBlocks, recvBlocks, phases);
  }
  if (phases == 1) {
    auto kernel = small ? sendKernel<1>(ctx.puts) : sendKernel<kPieceVecs>(ctx.puts);
    return launchWithSmem(kernel, blocks, smem, stream, ctx, in);
  }
  return launchWithSmem(lean ? kernels::dispatch_recv<true> : kernels::dispatch_recv<false>, blocks, smem, stream, ctx);
}

cudaError_t stageOccupancy(int* blocksPerSm) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocksPerSm, kernels::dispatch<true, false, kPieceVecs>, kThreads, 8192);
}

}  // namespace sy
