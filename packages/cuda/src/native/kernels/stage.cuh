// Helpers every stage kernel shares: the token chunk of a block, and the end of a stage (one
// system fence per block, one counter; the last block to count writes the stage's signals).
#pragma once
#include <cstdint>

#include "params.cuh"
#include "signal.cuh"

namespace sy {

/// Tokens per block when T tokens are spread over `blocks` blocks (at least 1).
__host__ __device__ inline int chunkTokens(int T, int blocks) { return T <= 0 ? 1 : (T + blocks - 1) / blocks; }

/// What a block's count orders before it (lastBlockDone): its stores for the peers (System: a
/// system fence; the last block then acquires at GPU scope), or nothing (None: the stage's stores
/// are read only once the kernel is done, so the count only picks the last block: combine recv,
/// whose last block advances the step, and the contiguous receive, whose last resets its claims).
enum class DoneFence { System, None };

/// Block-collective: after the block's stores (to peers too), counts the block done. True in every
/// thread of the last block to count, which resets the counter for the next step (and graph
/// replays) and may then publish the stage's signals with release stores (stReleaseSys), which
/// carry the ordering to the peers: every block's stores happen before them. Each block's thread 0
/// fences at system scope before it counts (its block's stores, ordered before it by the barrier,
/// reach the peers first); the last block's thread 0 then only needs an acquire at GPU scope (the
/// other blocks are on this GPU). One block: the barrier alone orders every warp's stores before
/// the caller's release stores (a release is cumulative), so no fence at all. `fence`: what the
/// stage's stores need (DoneFence; the host and the next kernels see every store once the kernel is
/// done). `blocks`: the stage's blocks when a kernel runs two stages (dispatch.cu, combine.cu), else the grid.
__device__ inline bool lastBlockDone(SyState* state, int counter, DoneFence fence = DoneFence::System,
                                     int blocks = -1) {
  __shared__ bool sLast;
  __syncthreads();
  const uint32_t n = blocks < 0 ? gridDim.x : static_cast<uint32_t>(blocks);
  if (n == 1) return true;  // one block: no counter; the caller's release stores order its stores
  if (threadIdx.x == 0) {
    if (fence == DoneFence::System) __threadfence_system();
    const uint32_t old = atomicAdd(&state->done[counter], 1u);
    sLast = old == n - 1;
    if (sLast) {
      state->done[counter] = 0;
      if (fence == DoneFence::System) fenceAcqRelGpu();  // acquire: every block's count, so every block's fenced stores
    }
  }
  __syncthreads();
  return sLast;
}

/// A warp's next work item after `after` when the items take more than one round of the grid's
/// `stride` warps (a warp's first item is its own: block * warps a block + warp): the next one
/// unclaimed, from `counter` (lane 0 claims it, the warp shares it), so the warps whose items were
/// lighter take more of them and the warps end together; `items` once none is left. The stage's
/// last block resets the counter. (With one round, the caller's next item is past the end.)
__device__ inline uint64_t claimItem(uint32_t* counter, uint64_t after, uint64_t items, uint64_t stride, int lane) {
  if (after >= items) return items;
  uint32_t k = 0;
  if (lane == 0) k = atomicAdd(counter, 1u);
  return stride + __shfl_sync(0xffffffffu, k, 0);
}

/// Spans each of `units` tokens or records is cut into (contiguous ranges of its `chunks` chunks),
/// so that `warps` warps have work when units are few (latency: one token spread over warps) and a
/// warp keeps whole rows when they are many (one decode per row, loads back to back).
__host__ __device__ inline int spansFor(int units, int chunks, int warps) {
  if (units <= 0) return 1;
  const int s = (warps + units - 1) / units;
  return s < 1 ? 1 : (s > chunks ? chunks : s);
}

/// Block-collective exclusive prefix sum of v[0, n) in place (shared memory); returns the total.
/// `scratch` holds blockDim.x / 32 + 1 ints; v's entries must be visible to the block (a barrier
/// after they were written). Up to 32 entries (a rank's records, the local experts of EP8 and
/// wider) one warp scans them with shuffles between two barriers; more, each thread sums a run of
/// consecutive entries, and warp 0 scans the warps' sums with shuffles.
__device__ inline int blockExclusiveScan(int* v, int n, int* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const auto warpScan = [&](int x) {  // inclusive
    for (int o = 1; o < 32; o <<= 1) {
      const int y = __shfl_up_sync(0xffffffffu, x, o);
      if (lane >= o) x += y;
    }
    return x;
  };
  if (n <= 32) {
    if (warp == 0) {
      const int x = lane < n ? v[lane] : 0;
      const int incl = warpScan(x);
      if (lane < n) v[lane] = incl - x;
      if (lane == 31) scratch[0] = incl;
    }
    __syncthreads();
    const int total = scratch[0];
    __syncthreads();  // scratch is free for the next scan
    return total;
  }
  const int per = (n + blockDim.x - 1) / blockDim.x;
  const int lo = min(n, static_cast<int>(threadIdx.x) * per), hi = min(n, lo + per);
  int mine = 0;
  for (int i = lo; i < hi; ++i) mine += v[i];
  const int incl = warpScan(mine);
  __syncthreads();  // v's readers above are done before anyone writes it
  if (lane == 31) scratch[warp] = incl;
  __syncthreads();
  if (warp == 0) {  // the warps' sums (at most 32 warps a block)
    const int x = lane < warps ? scratch[lane] : 0;
    const int wincl = warpScan(x);
    if (lane < warps) scratch[lane] = wincl - x;
    if (lane == 31) scratch[warps] = wincl;
  }
  __syncthreads();
  int run = scratch[warp] + incl - mine;
  for (int i = lo; i < hi; ++i) {
    const int x = v[i];
    v[i] = run;
    run += x;
  }
  const int total = scratch[warps];
  __syncthreads();
  return total;
}

/// This step's epoch (every kernel of a step reads the same step counter).
__device__ inline uint32_t stepEpoch(const SyState* state) { return epochOfStep(ldVolatile(&state->step)); }

/// This step's mark in SyTables::taken: the 64-bit step count + 1, so never 0 (the tables' initial
/// value) and never a mark an earlier step left.
__device__ inline uint64_t stepMark(const SyState* state) {
  return ((static_cast<uint64_t>(ldVolatile(&state->stepHigh)) << 32) | ldVolatile(&state->step)) + 1;
}

/// A block's mark for the other blocks of its grid: `v` at `p` after everything the block wrote
/// before it (the caller fences first), at GPU scope.
__device__ inline void stReleaseGpu64(uint64_t* p, uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/// Spins until another block of this grid set `*word` to this step's `mark` (stReleaseGpu64),
/// acquiring what that block wrote before it; any other value is an earlier step's, or 0. Returns
/// false after recording a timeout (`stage`, `peer`, `region` name it) or seeing another thread's error.
__device__ inline bool waitMark(const uint64_t* word, uint64_t mark, SyState* state, uint64_t timeoutNs, uint32_t stage,
                                uint32_t peer, uint32_t region) {
  uint64_t start = 0;
  for (uint32_t spins = 0;; ++spins) {
    uint64_t w;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(word) : "memory");
    if (w == mark) return true;
    if (spins == 0) start = globalTimerNs();
    if (spins > 32) __nanosleep(64);
    if ((spins & 15u) == 15u) {
      if (hasError(state)) return false;
      if (globalTimerNs() - start > timeoutNs) {
        recordError(state, E_TIMEOUT, stage, peer, region, static_cast<uint32_t>(w), static_cast<uint32_t>(mark));
        return false;
      }
    }
  }
}

}  // namespace sy
