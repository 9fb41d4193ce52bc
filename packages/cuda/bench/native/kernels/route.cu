// Route (the NCCL baseline's packing order, version 1's contiguous staging order):
// gives every (token, slot) its row in the destination's staging block, rows ordered by
// (local expert, token), with no atomics whose order could change a result.
//
///  topkIdx     Shape: [T, K]            int32 global expert ids, -1 = unused slot
///  localPos    Shape: [M, K]            int32 out: rank of the token among its chunk's tokens naming the expert
///  chunkCount  Shape: [chunks, E]       int32 out: per-chunk counts, then (last block) the exclusive prefix over chunks
///  regionTotal Shape: [E]               int32 out: rows this rank sends to expert ex
///  regionBase  Shape: [E]               int32 out: first row of ex in its destination's block
///  staged      Shape: [R]               int32 out: rows this rank sends to each destination
//
// Grid: one block of 32 * W threads per chunk of 32 * W tokens (contiguous.cuh, routeWarps). Each
// block sets one bit per (expert, token) in shared masks [E][W] (atomicOr: order-free), counts
// them, and gives each slot its rank by popcounts. The last block to finish turns the chunk
// counts into prefixes and computes the per-destination bases.
#include "launch_route.h"

namespace sy {
namespace {

__global__ void routeKernel(BaselineCtx c, const int32_t* topkIdx, int T) {
  const SyParams& p = c.p;
  const SyContig& g = c.contig;
  const int R = p.ranks(), L = p.localExperts(), K = p.topK(), dp = p.dpSize();
  const int E = R * L;
  const int W = blockDim.x >> 5;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  extern __shared__ uint32_t sBits[];
  uint16_t* sPre = reinterpret_cast<uint16_t*>(sBits + E * W);
  __shared__ bool sLast;

  for (int i = threadIdx.x; i < E * W; i += blockDim.x) sBits[i] = 0;
  __syncthreads();
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const bool owned = t < T && t % dp == c.rank % dp;
  if (owned) {
    for (int k = 0; k < K; ++k) {
      const int ex = topkIdx[static_cast<uint64_t>(t) * K + k];
      if (ex >= 0 && ex < E) atomicOr(&sBits[ex * W + warp], 1u << lane);
    }
  }
  __syncthreads();
  for (int ex = threadIdx.x; ex < E; ex += blockDim.x) {
    int run = 0;
    for (int w = 0; w < W; ++w) {
      sPre[ex * W + w] = static_cast<uint16_t>(run);
      run += __popc(sBits[ex * W + w]);
    }
    g.chunkCount[blockIdx.x * E + ex] = run;
  }
  __syncthreads();
  if (t < T) {
    for (int k = 0; k < K; ++k) {
      const uint64_t q = static_cast<uint64_t>(t) * K + k;
      const int ex = topkIdx[q];
      g.localPos[q] = (owned && ex >= 0 && ex < E) ? rankInChunk(sBits, sPre, ex, W, warp, lane) : -1;
    }
  }

  // The last block turns chunk counts into prefixes and computes the bases.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) sLast = atomicAdd(&g.done[D_ROUTE], 1u) == gridDim.x - 1;
  __syncthreads();
  if (!sLast) return;
  __threadfence();
  for (int ex = threadIdx.x; ex < E; ex += blockDim.x) {
    int run = 0;
    for (int ch = 0; ch < static_cast<int>(gridDim.x); ++ch) {
      const int v = __ldcg(&g.chunkCount[ch * E + ex]);
      g.chunkCount[ch * E + ex] = run;
      run += v;
    }
    g.regionTotal[ex] = run;
  }
  __syncthreads();
  for (int dst = threadIdx.x; dst < R; dst += blockDim.x) {
    int run = 0;
    for (int e = 0; e < L; ++e) {
      g.regionBase[dst * L + e] = run;
      run += __ldcg(&g.regionTotal[dst * L + e]);
    }
    g.staged[dst] = run;
  }
  __syncthreads();
  if (threadIdx.x == 0) g.done[D_ROUTE] = 0;  // reuse next step (and in graph replays)
}

}  // namespace

cudaError_t launchRoute(const BaselineCtx& ctx, const int32_t* topkIdx, int numTokens, cudaStream_t stream) {
  const int E = ctx.p.ranks() * ctx.p.localExperts();
  const int threads = ctx.contig.chunkTokens;
  const int W = threads / 32;
  const int chunks = numTokens > 0 ? (numTokens + threads - 1) / threads : 1;
  routeKernel<<<chunks, threads, routeSmemBytes(E, W), stream>>>(ctx, topkIdx, numTokens);
  return cudaGetLastError();
}

}  // namespace sy
