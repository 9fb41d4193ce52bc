// Quantise for the NCCL baseline (bf16 input, fp8 dispatch): each token once, however many experts
// it goes to, bit-exact with core's codec (codec/blockScale.ts, codec.cuh). The endpoint's dispatch
// send quantises in registers instead (payload.cuh).
//
///  x            Shape: [T, hidden]        bf16
///  quantX       Shape: [M, hidden]        fp8 out (local scratch), rows 0..T-1
///  quantScales  Shape: [M, hidden / 128]  fp32 out: each 128-element block's power-of-two scale
//
// One half-warp per 128-element block (16 lanes x 8 values, amax by shuffles), grid-stride over
// (token, block), so the same kernel runs in one pass (masked layout, baseline) or inside an SM
// budget (contiguous layout).
#include "../../../src/native/kernels/codec.cuh"
#include "launch_baseline.h"

namespace sy {
namespace {

constexpr int kThreads = 512;
constexpr int kBlocksPerCta = kThreads / 16;

__global__ void __launch_bounds__(kThreads) quantizeKernel(BaselineCtx c, const uint16_t* x, int T) {
  const int H = c.p.hidden();
  const int S = H / 128;
  const int lane = threadIdx.x & 31;
  const int l16 = lane & 15;
  const uint64_t total = static_cast<uint64_t>(T) * S;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * kBlocksPerCta;
  // Warp-uniform loop: both half-warps of a warp shuffle together, active or not.
  for (uint64_t base = static_cast<uint64_t>(blockIdx.x) * kBlocksPerCta + (threadIdx.x >> 5) * 2; base < total;
       base += stride) {
    const uint64_t hb = base + (lane >> 4);
    const bool active = hb < total;
    const uint64_t t = active ? hb / S : 0;
    const int b = active ? static_cast<int>(hb % S) : 0;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (active) v = *reinterpret_cast<const uint4*>(x + t * H + b * 128 + l16 * 8);
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    uint16_t e[8];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      e[2 * j] = static_cast<uint16_t>(w[j] & 0xffffu);
      e[2 * j + 1] = static_cast<uint16_t>(w[j] >> 16);
    }
    uint32_t amax = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) amax = max(amax, static_cast<uint32_t>(finiteAbsBits(e[j])));
#pragma unroll
    for (int off = 8; off > 0; off >>= 1) amax = max(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    if (!active) continue;
    const int s = scaleExponent(static_cast<uint16_t>(amax));
    uint32_t lo = 0, hi = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) lo |= static_cast<uint32_t>(encodeFp8Scaled(e[j], s)) << (8 * j);
#pragma unroll
    for (int j = 0; j < 4; ++j) hi |= static_cast<uint32_t>(encodeFp8Scaled(e[4 + j], s)) << (8 * j);
    *reinterpret_cast<uint2*>(c.quantX + t * H + b * 128 + l16 * 8) = make_uint2(lo, hi);
    if (l16 == 0) c.quantScales[t * S + b] = pow2f(s);
  }
}

}  // namespace

cudaError_t launchQuantize(const BaselineCtx& ctx, const void* x, int numTokens, int maxBlocks, cudaStream_t stream) {
  if (numTokens > 0) {
    const uint64_t scaleBlocks = static_cast<uint64_t>(numTokens) * (ctx.p.hidden() / 128);
    uint64_t blocks = (scaleBlocks + kBlocksPerCta - 1) / kBlocksPerCta;
    if (maxBlocks > 0 && blocks > static_cast<uint64_t>(maxBlocks)) blocks = static_cast<uint64_t>(maxBlocks);
    quantizeKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(ctx, static_cast<const uint16_t*>(x),
                                                                          numTokens);
  }
  return cudaGetLastError();
}

}  // namespace sy
