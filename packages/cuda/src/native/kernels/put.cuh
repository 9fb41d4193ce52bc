// The put path (docs/design.md "Put path"): how a send stage reaches a peer whose heap plain
// stores cannot reach. `SyCtx::peers[d]` is null for such a peer (another host; with the put
// transport, every PE but this one). The stage then writes what it would have stored into d's heap
// into this rank's outbox (SyOutbox) instead, and moves it with NVSHMEM puts of whole ranges (a
// block's records, a row), to the same offsets of d's heap the stores would have reached: the same
// bytes, the same records, the same signals. Each block completes its puts (nvshmem_quiet) before
// it counts itself done, so the stage's last block can publish the signal words; to a put peer it
// sends them with an atomic set after a fence (NVSHMEM orders operations to one PE across a fence),
// never before the count words the signal announces.
//
// Addresses given to NVSHMEM are this rank's symmetric addresses (`c.heap` + offset); NVSHMEM
// translates them to PE d's. The receive stages only read their own heap, so they are the same on
// both paths.
#pragma once
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdint>

#include "params.cuh"
#include "records.cuh"
#include "signal.cuh"

namespace sy {

/// Whether the peer whose heap base (from c.peers) is `heap` is reached by puts: null, its heap is
/// not mapped into this rank's address space. The send kernels are instantiated twice: kPuts =
/// false (every peer mapped: the put code compiled out, so it costs the store path no registers)
/// and true (launched when `SyCtx::puts`).
template <bool kPuts>
__device__ inline bool isPutHeap(const uint8_t* heap) {
  return kPuts && heap == nullptr;
}

/// isPutHeap for rank d (its base loaded only when the kernel has put peers).
template <bool kPuts>
__device__ inline bool isPutPeer(const SyCtx& c, int d) {
  return kPuts && isPutHeap<kPuts>(c.peers[d]);
}

/// Block-collective: this block's puts are complete (delivered) before the stage's counter sees
/// it. Nothing without put peers.
template <bool kPuts>
__device__ inline void completeBlockPuts(const SyCtx& c) {
  if (!kPuts || !c.puts) return;
  __syncthreads();
  if (threadIdx.x == 0) nvshmem_quiet();
}

/// One signal word to put peer `pe`: after every earlier operation of this PE to `pe` (a fence,
/// then an atomic set of the u32 at this rank's symmetric address `word`).
__device__ inline void putSignal(uint32_t* word, uint32_t value, int pe) {
  nvshmem_fence();
  nvshmem_uint32_atomic_set(word, value, pe);
}

/// Where a send stage's words for rank d go, one place for both paths. A signal word at [rank] of
/// `region` (dispatchSignal, combineSignal): a release store into d's heap, or a fenced atomic set
/// to a put peer.
template <bool kPuts>
__device__ inline void releaseSignal(const SyCtx& c, int region, int d, uint32_t value) {
  if (isPutPeer<kPuts>(c, d)) {
    putSignal(reinterpret_cast<uint32_t*>(c.heap + c.p.offset(region)) + c.rank, value, d);
    return;
  }
  stReleaseSys(reinterpret_cast<uint32_t*>(c.peers[d] + c.p.offset(region)) + c.rank, value);
}

/// Count word i of this rank's `perRank` words on d (countSignal [R(src), perRank]): a relaxed
/// store into d's heap (a count word is its own data), or the outbox's [d][i], put later.
template <bool kPuts>
__device__ inline void storeCountWord(const SyCtx& c, int d, int i, int perRank, uint32_t value) {
  if (isPutPeer<kPuts>(c, d)) {
    c.out.counts[static_cast<uint64_t>(d) * perRank + i] = value;
    return;
  }
  stRelaxedSys(reinterpret_cast<uint32_t*>(c.peers[d] + c.p.offset(R_COUNT_SIGNAL)) + c.rank * perRank + i, value);
}

/// Route record j of this rank on d: d's dispatchRoutes[rank][j], or the outbox's [d][j] (M, W:
/// the config's maxTokensPerRank and route words).
template <bool kPuts>
__device__ inline int32_t* recordSlot(const SyCtx& c, int d, int j, int M, int W) {
  return isPutPeer<kPuts>(c, d) ? recordAt(reinterpret_cast<uint8_t*>(c.out.routes), d, j, M, W)
                                : recordAt(c.peers[d] + c.p.offset(R_DISPATCH_ROUTES), c.rank, j, M, W);
}

/// A put peer's payload row of record j and its scales, in the outbox at [d][j].
__device__ inline uint8_t* outboxRow(const SyCtx& c, int d, int j) {
  return c.out.rows + (static_cast<uint64_t>(d) * c.p.maxTokens() + j) * c.p.rowBytes();
}
__device__ inline float* outboxScales(const SyCtx& c, int d, int j) {
  return c.out.scales + (static_cast<uint64_t>(d) * c.p.maxTokens() + j) * c.p.scalesPerRow();
}

/// Block-collective: `bytes` from this rank's outbox to the same-offset symmetric address `dst`
/// on `pe` (nothing for 0 bytes).
__device__ inline void putRange(uint8_t* dst, const void* src, uint64_t bytes, int pe) {
  if (bytes > 0) nvshmemx_putmem_nbi_block(dst, src, bytes, pe);
}

/// Warp-collective: as putRange, by one warp.
__device__ inline void putRangeWarp(uint8_t* dst, const void* src, uint64_t bytes, int pe) {
  if (bytes > 0) nvshmemx_putmem_nbi_warp(dst, src, bytes, pe);
}

}  // namespace sy
