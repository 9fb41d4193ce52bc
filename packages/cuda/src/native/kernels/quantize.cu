// Quantise (bf16 input, fp8 dispatch; both layouts and the NCCL baseline): each token once, however
// many experts it goes to, bit-exact with core's codec (codec/blockScale.ts, codec.cuh).
//
///  x            Shape: [T, hidden]        bf16
///  quantX       Shape: [M, hidden]        fp8 out (local scratch), rows 0..T-1
///  quantScales  Shape: [M, hidden / 128]  fp32 out: each 128-element block's power-of-two scale
//
// One half-warp per 128-element block (16 lanes x 8 values, amax by shuffles), 8 blocks per
// half-warp in flight, grid-stride over (token, block), so the same kernel runs in one pass (masked
// layout, baseline) or inside an SM budget (contiguous layout).
#include <cstdlib>

#include "codec.cuh"
#include "launch.h"
#include "launch_contiguous.h"

namespace sy {
namespace {

constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;

/// Each warp takes 2 * U consecutive 128-element blocks per pass and issues all U of its 16-byte
/// loads per lane before using any: with one load in flight a warp waits a DRAM round trip per
/// 512 bytes, and inside the contiguous layout's 24-block budget that bounds the whole pass.
template <int U>
__global__ void __launch_bounds__(kThreads) quantizeKernel(SyCtx c, const uint16_t* x, int T) {
  const int H = c.p.hidden();
  const int S = H / 128;
  const int lane = threadIdx.x & 31;
  const int l16 = lane & 15;
  const uint64_t total = static_cast<uint64_t>(T) * S;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * kWarps * 2 * U;
  // Warp-uniform loop: both half-warps of a warp shuffle together, active or not.
  for (uint64_t base = (static_cast<uint64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5)) * 2 * U; base < total;
       base += stride) {
    uint4 v[U];
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const uint64_t hb = base + 2 * j + (lane >> 4);
      v[j] = make_uint4(0, 0, 0, 0);
      if (hb < total) v[j] = __ldg(reinterpret_cast<const uint4*>(x + (hb / S) * H + (hb % S) * 128 + l16 * 8));
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const uint64_t hb = base + 2 * j + (lane >> 4);
      const bool active = hb < total;
      const uint64_t t = active ? hb / S : 0;
      const int b = active ? static_cast<int>(hb % S) : 0;
      const uint32_t w[4] = {v[j].x, v[j].y, v[j].z, v[j].w};
      uint16_t e[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        e[2 * i] = static_cast<uint16_t>(w[i] & 0xffffu);
        e[2 * i + 1] = static_cast<uint16_t>(w[i] >> 16);
      }
      uint32_t amax = 0;
#pragma unroll
      for (int i = 0; i < 8; ++i) amax = max(amax, static_cast<uint32_t>(finiteAbsBits(e[i])));
#pragma unroll
      for (int off = 8; off > 0; off >>= 1) amax = max(amax, __shfl_xor_sync(0xffffffffu, amax, off));
      if (!active) continue;
      const int s = scaleExponent(static_cast<uint16_t>(amax));
      uint32_t lo = 0, hi = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) lo |= static_cast<uint32_t>(encodeFp8Scaled(e[i], s)) << (8 * i);
#pragma unroll
      for (int i = 0; i < 4; ++i) hi |= static_cast<uint32_t>(encodeFp8Scaled(e[4 + i], s)) << (8 * i);
      *reinterpret_cast<uint2*>(c.quantX + t * H + b * 128 + l16 * 8) = make_uint2(lo, hi);
      if (l16 == 0) c.quantScales[t * S + b] = pow2f(s);
    }
  }
}

/// Loads in flight per lane: 8, or SWITCHYARD_QUANTIZE_UNROLL=1 (the kernel before 2026-11-22's
/// second session), kept so one bench run can time both (NOTES.md, "Quantise").
int quantizeUnroll() {
  static const int u = [] {
    const char* env = std::getenv("SWITCHYARD_QUANTIZE_UNROLL");
    return env != nullptr && std::atoi(env) == 1 ? 1 : 8;
  }();
  return u;
}

template <int U>
void launchUnrolled(const SyCtx& ctx, const void* x, int numTokens, int maxBlocks, cudaStream_t stream) {
  const uint64_t scaleBlocks = static_cast<uint64_t>(numTokens) * (ctx.p.hidden() / 128);
  const uint64_t perCta = static_cast<uint64_t>(kWarps) * 2 * U;
  uint64_t blocks = (scaleBlocks + perCta - 1) / perCta;
  if (maxBlocks > 0 && blocks > static_cast<uint64_t>(maxBlocks)) blocks = static_cast<uint64_t>(maxBlocks);
  quantizeKernel<U><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(ctx, static_cast<const uint16_t*>(x),
                                                                            numTokens);
}

}  // namespace

cudaError_t launchQuantize(const SyCtx& ctx, const void* x, int numTokens, int maxBlocks, cudaStream_t stream) {
  if (numTokens > 0) {
    if (quantizeUnroll() == 1) launchUnrolled<1>(ctx, x, numTokens, maxBlocks, stream);
    else launchUnrolled<8>(ctx, x, numTokens, maxBlocks, stream);
  }
  return cudaGetLastError();
}

cudaError_t loadQuantizeKernels() { return loadKernels(quantizeKernel<1>, quantizeKernel<8>); }

}  // namespace sy
