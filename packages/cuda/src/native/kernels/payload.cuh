// Dispatch send's payload (both layouts): one warp writes one piece (kPieceBytes of the dispatch
// row) of one token to every destination row the caller names, reading the input once. bf16
// input with fp8 dispatch is quantised here, in registers (the fp8 cast fused into the send):
// each lane holds 16 elements, 8 lanes one 128-element block, amax by shuffles, then the
// block's power-of-two scale and the e4m3 bytes, bit-exact with core's codec (quantize16).
//
///  x        Shape: [T, hidden]          input dtype (bf16 bits, or fp8 / bf16 passthrough)
///  xScales  Shape: [T, hidden / 128]    fp32, fp8 input only
///  each(fn) calls fn(uint8_t* rowX, float* rowScales) for every destination row of the token
#pragma once
#include <cuda_fp8.h>

#include <cstdint>

#include "bulk_copy.cuh"
#include "codec.cuh"
#include "copy.cuh"
#include "params.cuh"

namespace sy {

/// Bytes of the dispatch row one warp writes per piece (4 x 512: four 16-byte vectors a lane).
/// The masked send cuts rows into pieces of one vector a lane (512 bytes) when its tokens are few
/// (smallPieces, below): more warps share a row, and each runs a quarter of the code.
constexpr int kPieceBytes = 2048;
constexpr int kPieceVecs = kPieceBytes / 512;

__host__ __device__ inline int piecesPerRow(uint64_t rowBytes, int pieceBytes = kPieceBytes) {
  return rowBytes == 0 ? 1 : static_cast<int>((rowBytes + pieceBytes - 1) / pieceBytes);
}

/// Whether `units` rows (the send's tokens, the receive's records) are cut into pieces of 512 bytes
/// rather than kPieceBytes: when the cut gives more pieces and every such piece still has one of
/// `warps` warps. A warp's piece is then a quarter of the arithmetic (the fp8 cast) and of the code:
/// at one token the send is bound by one warp's serial work and by fetching its instructions, cold
/// at each launch (docs/design.md).
__host__ __device__ inline bool smallPieces(uint64_t rowBytes, uint64_t units, uint64_t warps) {
  const int small = piecesPerRow(rowBytes, 512);
  return small > piecesPerRow(rowBytes) && units * static_cast<uint64_t>(small) <= warps;
}

/// Core's block scale exponent for a block whose largest finite |x| has bf16 magnitude bits `amax`:
/// the smallest s >= -126 with amax <= 448 * 2^s (codec.cuh's scaleExponent, without its loop).
/// amax = mant * 2^exp (bf16Split); with h = floor(log2(mant)), amax = (mant / 2^h) * 2^(h + exp),
/// and 448 = 1.75 * 2^8, so s = h + exp - 8, plus 1 when mant / 2^h > 1.75.
__device__ inline int blockScaleExponent(uint32_t amax) {
  uint32_t mant;
  int exp;
  if (amax == 0 || !bf16Split(static_cast<uint16_t>(amax), mant, exp)) return kMinScaleExp;
  const int h = floorLog2(mant);
  const int s = h + exp - 8 + (4 * mant > (7u << h) ? 1 : 0);
  return s < kMinScaleExp ? kMinScaleExp : s;
}

/// One lane's 16 bf16 values (a, b) -> 16 e4m3 bytes and the block scale (the 8 lanes of a
/// 128-element block share it: amax by shuffles within each group of 8 lanes; every lane calls
/// this). x / 2^s is exact in fp32 (a power-of-two scale; what fp32 would round lies far below
/// e4m3's smallest subnormal), then the hardware's round-to-nearest-even with saturation to +-448
/// (infinities too), as core's codec. Non-finite values are skipped by amax; a NaN keeps its sign
/// (0x7f | sign), as core's quantizeRows. Packed 16-bit max / compare do two values an instruction.
///
/// `amaxScales` (the amax format, core's quantizeBlockAmax): a = max(amax, fl32(1e-4)) as fp32, the
/// stored scale fl32(a * fl32(1 / 448)), and each value fl32(x * fl32(448 / a)) (one correctly
/// rounded division a block) converted the same way.
constexpr uint32_t kAmaxFloorBits = 0x38d1b717u;  // fl32(1e-4)
constexpr uint32_t kFp8MaxInvBits = 0x3b124925u;  // fl32(1 / 448)
__device__ inline uint4 quantize16(uint4 a, uint4 b, float& scale, bool amaxScales) {
  const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
  uint32_t m = 0, special = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const uint32_t u = w[j] & 0x7fff7fffu;
    special |= __vcmpgeu2(u, 0x7f807f80u);
    m = __vmaxu2(m, u);
  }
  uint32_t amax = max(m & 0xffffu, m >> 16);
  if (special != 0) {  // an Inf or NaN among this lane's values: the exact (slow) amax
    amax = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      amax = max(amax, static_cast<uint32_t>(finiteAbsBits(static_cast<uint16_t>(w[j] & 0xffffu))));
      amax = max(amax, static_cast<uint32_t>(finiteAbsBits(static_cast<uint16_t>(w[j] >> 16))));
    }
  }
  amax = max(amax, __shfl_xor_sync(kFullMask, amax, 1));
  amax = max(amax, __shfl_xor_sync(kFullMask, amax, 2));
  amax = max(amax, __shfl_xor_sync(kFullMask, amax, 4));
  float inv;
  if (amaxScales) {
    const float am = fmaxf(bf16ToFloat(static_cast<uint16_t>(amax)), __uint_as_float(kAmaxFloorBits));
    scale = __fmul_rn(am, __uint_as_float(kFp8MaxInvBits));
    inv = __fdiv_rn(448.0f, am);
  } else {
    const int s = blockScaleExponent(amax);
    scale = pow2f(s);
    inv = pow2f(-s);
  }
  uint32_t out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t u0 = w[2 * i], u1 = w[2 * i + 1];
    const __nv_fp8x2_storage_t q0 = __nv_cvt_float2_to_fp8x2(
        make_float2(__fmul_rn(__uint_as_float(u0 << 16), inv), __fmul_rn(__uint_as_float(u0 & 0xffff0000u), inv)), __NV_SATFINITE,
        __NV_E4M3);
    const __nv_fp8x2_storage_t q1 = __nv_cvt_float2_to_fp8x2(
        make_float2(__fmul_rn(__uint_as_float(u1 << 16), inv), __fmul_rn(__uint_as_float(u1 & 0xffff0000u), inv)), __NV_SATFINITE,
        __NV_E4M3);
    out[i] = static_cast<uint32_t>(q0) | static_cast<uint32_t>(q1) << 16;
  }
  if (special != 0) {  // NaNs keep their sign
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const uint32_t x = (w[k >> 1] >> (16 * (k & 1))) & 0xffffu;
      if ((x & 0x7fffu) > 0x7f80u) {
        const uint32_t byte = ((x & 0x8000u) ? 0x80u : 0u) | 0x7fu;
        const int shift = 8 * (k & 3);
        out[k >> 2] = (out[k >> 2] & ~(0xffu << shift)) | byte << shift;
      }
    }
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

/// Whether the fast paths apply: 16-byte aligned rows in and out.
__device__ inline bool payloadVectorised(const SyParams& p, const void* x) {
  return (p.rowBytes() & 15) == 0 && (reinterpret_cast<uint64_t>(x) & 15) == 0;
}

/// One piece of a token's input in registers: bf16 (quantised on the way) as a[i], b[i] (16
/// values a lane per 512 outputs), or a passthrough row's 16-byte vectors as a[i].
/// V: 16-byte vectors a lane in a piece (pieces of V * 512 dispatch bytes).
template <int V = kPieceVecs>
struct PieceRegs {
  uint4 a[V];
  uint4 b[V];
};

/// Loads piece `piece` of token t (the fast paths; the unaligned passthrough loads in storePiece).
template <int V>
__device__ inline void loadPiece(const SyParams& p, const uint8_t* x, int t, int piece, int lane, PieceRegs<V>& r) {
  const uint64_t rowBytes = p.rowBytes();
  const uint64_t b0 = static_cast<uint64_t>(piece) * V * 512;
  const uint64_t b1 = min(rowBytes, b0 + V * 512);
  if (p.quantize()) {
    // fp8 out: byte b of the row is element b; bf16 in at 2 bytes per element.
    const uint16_t* src = reinterpret_cast<const uint16_t*>(x) + static_cast<uint64_t>(t) * p.hidden();
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const uint64_t e = b0 + i * 512 + lane * 16;
      r.a[i] = r.b[i] = make_uint4(0, 0, 0, 0);
      if (e < b1) {
        r.a[i] = *reinterpret_cast<const uint4*>(src + e);
        r.b[i] = *reinterpret_cast<const uint4*>(src + e + 8);
      }
    }
  } else if (payloadVectorised(p, x)) {
    const uint8_t* src = x + static_cast<uint64_t>(t) * rowBytes;
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const uint64_t o = b0 + i * 512 + lane * 16;
      r.a[i] = o < b1 ? *reinterpret_cast<const uint4*>(src + o) : make_uint4(0, 0, 0, 0);
    }
  }
}

/// Fetches the input of piece `piece` of token t into L2 (a 128-byte line a lane; nothing waits).
template <int V>
__device__ inline void prefetchPiece(const SyParams& p, const uint8_t* x, int t, int piece, int lane) {
  const uint64_t rowBytes = p.rowBytes();
  const uint64_t inPerOut = p.quantize() ? 2 : 1;  // bf16 in, fp8 out: two input bytes an output byte
  const uint64_t b0 = static_cast<uint64_t>(piece) * V * 512 * inPerOut;
  const uint64_t b1 = min(rowBytes * inPerOut, b0 + V * 512 * inPerOut);
  const uint8_t* row = x + static_cast<uint64_t>(t) * rowBytes * inPerOut;
  for (uint64_t o = b0 + static_cast<uint64_t>(lane) * 128; o < b1; o += 32 * 128) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(row + o));
  }
}

/// The warp writes piece `piece` of token t's dispatch row (and its scales) to every row `each`
/// names, from `r` (loadPiece). Every lane calls it with the same arguments. H % 128 == 0 for fp8,
/// so the 8 lanes of a 128-element block are all in range or all out.
template <int V, typename Each>
__device__ inline void storePiece(const SyParams& p, const uint8_t* x, const float* xScales, int t, int piece,
                                  int lane, const PieceRegs<V>& r, Each each) {
  const uint64_t rowBytes = p.rowBytes();
  const uint64_t b0 = static_cast<uint64_t>(piece) * V * 512;
  const uint64_t b1 = min(rowBytes, b0 + V * 512);
  const int S = p.scalesPerRow();
  if (p.quantize()) {
    uint4 q[V];
    float scale[V];
    const bool amaxScales = p.amaxScales();
#pragma unroll
    for (int i = 0; i < V; ++i) q[i] = quantize16(r.a[i], r.b[i], scale[i], amaxScales);
    each([&](uint8_t* rowX, float* rowS) {
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const uint64_t e = b0 + i * 512 + lane * 16;
        if (e < b1) {
          *reinterpret_cast<uint4*>(rowX + e) = q[i];
          if ((lane & 7) == 0) rowS[e / 128] = scale[i];
        }
      }
    });
    return;
  }
  const uint8_t* src = x + static_cast<uint64_t>(t) * rowBytes;
  if (payloadVectorised(p, x)) {
    each([&](uint8_t* rowX, float*) {
#pragma unroll
      for (int i = 0; i < V; ++i) {
        const uint64_t o = b0 + i * 512 + lane * 16;
        if (o < b1) *reinterpret_cast<uint4*>(rowX + o) = r.a[i];
      }
    });
  } else {
    each([&](uint8_t* rowX, float*) { warpCopy(rowX + b0, src + b0, b1 - b0, lane); });
  }
  if (piece == 0 && S > 0 && xScales != nullptr) {  // fp8 passthrough: the caller's scales
    const float* sRow = xScales + static_cast<uint64_t>(t) * S;
    each([&](uint8_t*, float* rowS) {
      for (int i = lane; i < S; i += 32) rowS[i] = sRow[i];
    });
  }
}

/// Pieces [p0, p1) of token t, one after the other (loads of a piece, then its stores: a second
/// register buffer to overlap them spilled and measured slower, docs/design.md).
template <int V = kPieceVecs, typename Each>
__device__ inline void sendPieces(const SyParams& p, const uint8_t* x, const float* xScales, int t, int p0, int p1,
                                  int lane, Each each) {
  for (int k = p0; k < p1; ++k) {
    PieceRegs<V> r;
    loadPiece(p, x, t, k, lane, r);
    storePiece(p, x, xScales, t, k, lane, r, each);
  }
}

/// A warp's staging for the bulk sends (bulkSendPieces): two pieces of the dispatch row and their
/// scales, so the stores of one piece leave while the next is loaded and cast.
struct alignas(16) PieceStage {
  uint8_t x[2][kPieceBytes];
  float s[2][kPieceBytes / 128];
};

/// Whether bulkSendPieces applies (on sm_90: SY_BULK_COPIES): 16-byte rows and input (bf16 input
/// cast to fp8 is read 16 bytes at a time in any case), and S a multiple of 4, so that every
/// piece's scales are a 16-byte span at a 16-byte offset.
__host__ __device__ inline bool bulkPieces(const SyParams& p, const void* x) {
  return (p.rowBytes() & 15) == 0 && (p.scalesPerRow() & 3) == 0 &&
         (p.quantize() || (reinterpret_cast<uintptr_t>(x) & 15) == 0);
}

/// Pieces [p0, p1) of token t through the warp's shared memory: the warp loads (and casts) a piece
/// into registers, writes it and its scales to `st`, and each lane with a destination row (`rowX`
/// non-null, its scales at `rowS`) stores the bytes there with a bulk copy and the scales with its
/// own stores; no lane stores a row's bytes itself. `n` counts the warp's pieces across calls (the
/// buffer is n % 2); a buffer is refilled once the bulk copies of two pieces before have read it.
/// The caller ends with bulkSendDone before anything reads the rows or signals them.
template <int V = kPieceVecs>
__device__ inline void bulkSendPieces(const SyParams& p, const uint8_t* x, const float* xScales, int t, int p0,
                                      int p1, int lane, uint8_t* rowX, float* rowS, PieceStage* st, uint32_t& n) {
  const uint64_t rowBytes = p.rowBytes();
  const int S = p.scalesPerRow();
  const bool amaxScales = p.amaxScales();
  for (int k = p0; k < p1; ++k, ++n) {
    PieceRegs<V> r;
    loadPiece(p, x, t, k, lane, r);
    const uint64_t b0 = static_cast<uint64_t>(k) * V * 512;
    const uint64_t b1 = min(rowBytes, b0 + V * 512);
    const int buf = static_cast<int>(n & 1u);
    uint8_t* sx = st->x[buf];
    float* ss = st->s[buf];
    // fp8 passthrough: the caller's scales of this piece (a lane a 128-byte block)
    float inScale = 0.0f;
    const bool scaleLane = S > 0 && lane < V * 4 && b0 + lane * 128 < b1;
    if (!p.quantize() && scaleLane && xScales != nullptr) inScale = xScales[static_cast<uint64_t>(t) * S + b0 / 128 + lane];
    SY_BULK_ASM("cp.async.bulk.wait_group.read 1;" ::: "memory");  // this buffer's copies of two pieces ago
    __syncwarp();
    if (p.quantize()) {
#pragma unroll
      for (int i = 0; i < V; ++i) {
        float scale;
        const uint4 q = quantize16(r.a[i], r.b[i], scale, amaxScales);
        if (b0 + i * 512 + lane * 16 < b1) {
          *reinterpret_cast<uint4*>(sx + i * 512 + lane * 16) = q;
          if ((lane & 7) == 0) ss[i * 4 + lane / 8] = scale;
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < V; ++i) {
        if (b0 + i * 512 + lane * 16 < b1) *reinterpret_cast<uint4*>(sx + i * 512 + lane * 16) = r.a[i];
      }
      if (scaleLane) ss[lane] = inScale;
    }
    SY_BULK_ASM("fence.proxy.async.shared::cta;" ::: "memory");  // the staged bytes, to the bulk copies
    __syncwarp();
    if (rowX != nullptr) {
      bulkStore(rowX + b0, sx, static_cast<uint32_t>(b1 - b0));
      // The piece's scales (at most 16 floats) by the lane's own 16-byte stores: half the copies.
      const int nS = S > 0 ? static_cast<int>((b1 - b0) / 128) : 0;
      int i = 0;
      for (; i + 4 <= nS; i += 4) *reinterpret_cast<float4*>(rowS + b0 / 128 + i) = *reinterpret_cast<const float4*>(ss + i);
      for (; i < nS; ++i) rowS[b0 / 128 + i] = ss[i];
    }
    bulkCommit();
  }
}

/// The warp's bulk sends complete and ordered before this lane's later stores and fences (the
/// block's fence and signal), and its staging free.
__device__ inline void bulkSendDone() {
  bulkWaitAll();
  fenceProxyAsync();
  __syncwarp();
}

}  // namespace sy
