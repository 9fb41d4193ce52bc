// The put path: for peers that nvshmem_ptr cannot map (another host), rows are staged in a
// symmetric buffer and moved with NVSHMEM puts, then ordered before the signal by nvshmem_quiet.
// NVSHMEM's put-with-signal carries a 64-bit signal; core's signal words are 32-bit and packed
// side by side, so the signal is a 32-bit atomic set after the quiet instead.
#pragma once
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdint>

namespace sy {

/// Block-collective put of `bytes` from local symmetric `src` to symmetric `dst` on `pe`.
__device__ inline void putBlock(void* dst, const void* src, uint64_t bytes, int pe) {
  if (bytes) nvshmemx_putmem_nbi_block(dst, src, bytes, pe);
}

/// Warp-collective put.
__device__ inline void putWarp(void* dst, const void* src, uint64_t bytes, int pe) {
  if (bytes) nvshmemx_putmem_nbi_warp(dst, src, bytes, pe);
}

/// Completes this PE's outstanding puts (one thread).
__device__ inline void putQuiet() { nvshmem_quiet(); }

/// Writes a 32-bit signal word on `pe` after everything quieted before it (one thread).
__device__ inline void putSignal(uint32_t* symmetricWord, uint32_t value, int pe) {
  nvshmem_fence();
  nvshmem_uint32_atomic_set(symmetricWord, value, pe);
}

}  // namespace sy
