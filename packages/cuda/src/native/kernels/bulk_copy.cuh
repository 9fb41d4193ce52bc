// Bulk copies by the SM's copy engine (sm_90 `cp.async.bulk`, one-dimensional, no tensor map):
// one thread moves a whole span of global memory into shared memory, or from shared memory to
// global memory, with no registers holding the bytes, so a warp keeps tens of KB in flight where
// its registers held 4 KB. Addresses and sizes are multiples of 16 bytes.
//
// Ordering, as the PTX memory model states it for the async proxy: rows another rank or kernel
// wrote with ordinary stores, and that this thread has acquired, are read by a bulk load only after
// `fenceProxyAsync()`; a load's bytes are in shared memory once its mbarrier's phase completes; a
// buffer may be refilled once `bulkWaitRead()` says the stores issued from it have read it; the
// stores are complete (visible to later kernels) after `bulkWaitAll()`.
#pragma once
#include <cstdint>

/// 1 where the device code is compiled for sm_90 or later (and on the host); an older
/// architecture (SWITCHYARD_CUDA_ARCH) compiles these functions empty (SY_BULK_ASM), and callers
/// take the warps' own copies instead (`if (... && SY_BULK_COPIES)`).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define SY_BULK_COPIES 0
#define SY_BULK_ASM(...) \
  do {                   \
  } while (0)
#else
#define SY_BULK_COPIES 1
#define SY_BULK_ASM(...) asm volatile(__VA_ARGS__)
#endif

namespace sy {

__device__ inline uint32_t smemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

/// An mbarrier that one thread arrives at once a phase; call before any bulk load uses it.
__device__ inline void mbarInit(uint64_t* bar) {
  SY_BULK_ASM("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smemAddr(bar)));
  SY_BULK_ASM("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Generic-proxy writes this thread has seen become visible to its later bulk operations.
__device__ inline void fenceProxyAsync() {
  SY_BULK_ASM("fence.proxy.async;" ::: "memory");
}

/// `bytes` from global `src` into shared `dst`; the phase of `bar` completes when they are there.
__device__ inline void bulkLoad(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  SY_BULK_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smemAddr(bar)), "r"(bytes) : "memory");
  SY_BULK_ASM(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smemAddr(dst)),
      "l"(src), "r"(bytes), "r"(smemAddr(bar))
      : "memory");
}

/// Waits for the phase `parity` of `bar` (the bulk load's bytes have arrived).
__device__ inline void mbarWait(uint64_t* bar, uint32_t parity) {
  uint32_t done = !SY_BULK_COPIES;
  while (!done) {
    SY_BULK_ASM(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(smemAddr(bar)), "r"(parity)
        : "memory");
  }
}

/// `bytes` from shared `src` to global `dst`, in this thread's current bulk group.
__device__ inline void bulkStore(void* dst, const void* src, uint32_t bytes) {
  SY_BULK_ASM("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smemAddr(src)), "r"(bytes)
               : "memory");
}

/// Closes this thread's current bulk group.
__device__ inline void bulkCommit() {
  SY_BULK_ASM("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until every committed bulk store of this thread has read its shared memory.
__device__ inline void bulkWaitRead() {
  SY_BULK_ASM("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

/// Waits until every committed bulk store of this thread is complete.
__device__ inline void bulkWaitAll() {
  SY_BULK_ASM("cp.async.bulk.wait_group 0;" ::: "memory");
}

}  // namespace sy
