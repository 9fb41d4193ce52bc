// Dispatch send (masked layout): every (destination rank, local expert) region gets, in ascending
// token order, the tokens this rank owns that name that expert; then one signal word.
//
// Buffers (all byte offsets from core's layout, region order REGION_NAMES):
///  x            Shape: [T, hidden]            input dtype (bf16 bits, or fp8 bits with scales)
///  scales       Shape: [T, hidden / 128]      fp32, fp8 input only
///  topkIdx      Shape: [T, topK]              int32 global expert ids, -1 = unused slot
///  quantX       Shape: [M, hidden]            fp8 scratch (local): x quantised once per token (bf16 -> fp8)
///  quantScales  Shape: [M, hidden / 128]      fp32 scratch: their power-of-two block scales
///  dispatchX    Shape: [L, R, M, hidden]      on the destination: row i from source `rank` at [e][rank][i]
///  dispatchScales Shape: [L, R, M, hidden/128] fp32 (fp8 dispatch)
///  dispatchMeta Shape: [L, R, M, 4]           int32 (srcRank, srcToken, topkSlot, localExpert)
///  dispatchSignal Shape: [L, R]               u32 signal (epoch, count) at [e][rank]
//
// bf16 input with fp8 dispatch first runs quantize.cu (each token once, into quantX / quantScales).
// dispatchSendKernel: grid (R * L) regions x `splits` blocks. Each block scans all T tokens with a
// ballot prefix (so every block knows every row's index and the region's count), copies the rows
// whose index is congruent to its split with the whole block (flattened over row x 16-byte
// vector), and the last split to finish writes the signal (release, system scope) and, with stats
// on, the region's row count into ctx.stats.dispatchSent [R, L].
#include <algorithm>

#include "copy.cuh"
#include "launch.h"
#include "signal.cuh"
#include "transport.cuh"

namespace sy {
namespace {

constexpr int kThreads = kDispatchSendThreads;
constexpr int kWarps = kThreads / kWarp;
constexpr uint32_t kFull = 0xffffffffu;
__global__ void __launch_bounds__(kThreads, 2) dispatchSendKernel(SyCtx c, const uint8_t* x, const float* scales,
                                                              const int32_t* topkIdx, int T) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), dp = p.dpSize();
  const int M = p.maxTokens(), S = p.scalesPerRow();
  const int region = blockIdx.x / c.splits;
  const int split = blockIdx.x % c.splits;
  const int dst = region / L;
  const int e = region % L;
  const int expert = dst * L + e;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  if (hasError(c.state)) return;

  uint8_t* peer = c.peers[dst];
  const bool direct = peer != nullptr;
  // The put path stages rows in a buffer laid out like the destination's, with axis srcRank read as dst.
  uint8_t* base = direct ? peer : c.staging;
  const uint64_t slot0 = static_cast<uint64_t>(e * R + (direct ? c.rank : dst)) * M;
  const uint32_t rowBytes = static_cast<uint32_t>(p.rowBytes());
  const uint32_t scaleBytes = static_cast<uint32_t>(S) * 4;
  uint8_t* xRegion = base + p.offset(R_DISPATCH_X) + slot0 * rowBytes;
  uint8_t* sRegion = base + p.offset(R_DISPATCH_SCALES) + slot0 * scaleBytes;
  int4* mRegion = reinterpret_cast<int4*>(base + p.offset(R_DISPATCH_META)) + slot0;
  const uint64_t xAlign = reinterpret_cast<uint64_t>(xRegion) | reinterpret_cast<uint64_t>(x);
  const uint64_t sAlign = reinterpret_cast<uint64_t>(sRegion) | reinterpret_cast<uint64_t>(scales);

  __shared__ int sTok[kThreads];
  __shared__ int sSlot[kThreads];
  __shared__ int sWarpTotal[kWarps];
  const int mine = c.rank % dp;
  const int splits = c.splits;
  int running = 0;  // rows of this region in earlier chunks
  for (int chunk = 0; chunk < T; chunk += kThreads) {
    const int t = chunk + threadIdx.x;
    int k = -1;
    if (t < T && t % dp == mine) {
      // No early exit: the loads are independent and issue back to back (8 sequential L2 round
      // trips per thread cost ~3 us per wave in version 1). Backwards, so the first match wins.
      const int32_t* row = topkIdx + static_cast<uint64_t>(t) * K;
#pragma unroll 8
      for (int j = K - 1; j >= 0; --j) {
        if (row[j] == expert) k = j;
      }
    }
    const uint32_t ballot = __ballot_sync(kFull, k >= 0);
    if (lane == 0) sWarpTotal[warp] = __popc(ballot);
    __syncthreads();
    int before = 0, total = 0;
    for (int w = 0; w < kWarps; ++w) {
      const int n = sWarpTotal[w];
      before += w < warp ? n : 0;
      total += n;
    }
    if (k >= 0) {
      const int idx = before + __popc(ballot & ((1u << lane) - 1u));
      sTok[idx] = t;
      sSlot[idx] = k;
    }
    __syncthreads();
    // This split's rows of the chunk: j = first + q * splits, q < n.
    const int first = ((split - running % splits) % splits + splits) % splits;
    const int n = total > first ? (total - first + splits - 1) / splits : 0;
    const int base0 = running;
    blockCopyRows(n, rowBytes, xAlign, [&](int q, uint8_t*& d, const uint8_t*& s) {
      const int j = first + q * splits;
      d = xRegion + static_cast<uint64_t>(base0 + j) * rowBytes;
      s = x + static_cast<uint64_t>(sTok[j]) * rowBytes;
    });
    if (S) {
      blockCopyRows(n, scaleBytes, sAlign, [&](int q, uint8_t*& d, const uint8_t*& s) {
        const int j = first + q * splits;
        d = sRegion + static_cast<uint64_t>(base0 + j) * scaleBytes;
        s = reinterpret_cast<const uint8_t*>(scales) + static_cast<uint64_t>(sTok[j]) * scaleBytes;
      });
    }
    for (int q = threadIdx.x; q < n; q += kThreads) {
      const int j = first + q * splits;
      mRegion[base0 + j] = make_int4(c.rank, sTok[j], sSlot[j], e);
    }
    running += total;
    __syncthreads();
  }

  if (!direct) {
    // Put path (splits == 1): the block owns the whole region; move it, then signal.
    uint8_t* sym = c.heap;  // symmetric addresses are the same on every PE
    const uint64_t dslot0 = static_cast<uint64_t>(e * R + c.rank) * M;
    __threadfence_system();
    __syncthreads();
    putBlock(sym + p.offset(R_DISPATCH_X) + dslot0 * rowBytes, xRegion, static_cast<uint64_t>(running) * rowBytes, dst);
    if (S) {
      putBlock(sym + p.offset(R_DISPATCH_SCALES) + dslot0 * scaleBytes, sRegion,
               static_cast<uint64_t>(running) * scaleBytes, dst);
    }
    putBlock(reinterpret_cast<int4*>(sym + p.offset(R_DISPATCH_META)) + dslot0, mRegion,
             static_cast<uint64_t>(running) * sizeof(int4), dst);
    __syncthreads();
    if (threadIdx.x == 0) {
      if (c.stats.dispatchSent != nullptr) c.stats.dispatchSent[region] = static_cast<uint32_t>(running);
      putQuiet();
      putSignal(reinterpret_cast<uint32_t*>(sym + p.offset(R_DISPATCH_SIGNAL)) + e * R + c.rank,
                encodeSignal(epoch, running), dst);
    }
    return;
  }

  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0) {
    bool last = true;
    if (splits > 1) {
      const uint32_t old = atomicAdd(&c.regionDone[region], 1u);
      last = old == static_cast<uint32_t>(splits - 1);
      if (last) {
        c.regionDone[region] = 0;  // reuse next step (and in graph replays)
        __threadfence_system();
      }
    }
    if (last) {
      if (c.stats.dispatchSent != nullptr) c.stats.dispatchSent[region] = static_cast<uint32_t>(running);
      uint32_t* sig = reinterpret_cast<uint32_t*>(peer + p.offset(R_DISPATCH_SIGNAL)) + e * R + c.rank;
      stReleaseSys(sig, encodeSignal(epoch, running));
    }
  }
}

}  // namespace

cudaError_t launchDispatchSend(const SyCtx& ctx, const void* x, const float* scales, const int32_t* topkIdx,
                               int numTokens, cudaStream_t stream) {
  const uint8_t* src = static_cast<const uint8_t*>(x);
  if (ctx.p.quantize()) {
    const cudaError_t rc = launchQuantize(ctx, x, numTokens, 0, stream);
    if (rc != cudaSuccess) return rc;
    src = ctx.quantX;
    scales = ctx.quantScales;
  }
  // A region holds at most numTokens rows: more splits than that only add idle blocks.
  SyCtx c = ctx;
  c.splits = std::max(1, std::min(ctx.splits, numTokens));
  const int regions = ctx.p.ranks() * ctx.p.localExperts();
  dispatchSendKernel<<<regions * c.splits, kThreads, 0, stream>>>(c, src, scales, topkIdx, numTokens);
  return cudaGetLastError();
}

cudaError_t dispatchSendOccupancy(int* blocksPerSm) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocksPerSm, dispatchSendKernel, kThreads, 0);
}

}  // namespace sy
