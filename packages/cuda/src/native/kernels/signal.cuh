// Signal words (core's signal.ts) and the memory-ordering primitives around them.
//
// A signal is one u32: epoch << 21 | (count + 1), epoch = step % 2047 + 1. Senders write it after
// their rows with a release store at system scope (the rows may be NVLink stores into a peer's
// heap); receivers spin on it with acquire loads, bounded by %globaltimer.
#pragma once
#include <cstdint>

#include "params.cuh"

namespace sy {

constexpr uint32_t kCountBits = 21;
constexpr uint32_t kCountMask = (1u << kCountBits) - 1;
constexpr uint32_t kEpochs = 2047;

__host__ __device__ inline uint32_t epochOfStep(uint32_t step) { return step % kEpochs + 1; }
__host__ __device__ inline uint32_t previousEpoch(uint32_t epoch) { return epoch == 1 ? kEpochs : epoch - 1; }
__host__ __device__ inline uint32_t encodeSignal(uint32_t epoch, uint32_t count) {
  return (epoch << kCountBits) | (count + 1);
}
__host__ __device__ inline uint32_t signalEpoch(uint32_t word) { return word >> kCountBits; }
__host__ __device__ inline uint32_t signalCount(uint32_t word) { return (word & kCountMask) - 1; }

__device__ inline uint32_t ldAcquireSys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ inline void stReleaseSys(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/// A signal word that orders nothing before it (the count words: their own value is the data),
/// or one published by a later fence + release: no fence of its own.
__device__ inline void stRelaxedSys(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ inline uint32_t ldRelaxedSys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// Acquire (and release) among the blocks of one GPU: the last block of a stage after it read the
/// stage's counter (stage.cuh's lastBlockDone).
__device__ inline void fenceAcqRelGpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

__device__ inline uint32_t ldVolatile(const uint32_t* p) {
  return *reinterpret_cast<const volatile uint32_t*>(p);
}

__device__ inline uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Records the first error of a step; later ones are dropped. Any thread may call it.
__device__ inline void recordError(SyState* state, uint32_t code, uint32_t stage, uint32_t peer,
                                   uint32_t region, uint32_t d0, uint32_t d1) {
  if (atomicCAS(&state->error.code, 0u, code) == 0u) {
    state->error.stage = stage;
    state->error.peer = peer;
    state->error.region = region;
    state->error.detail0 = d0;
    state->error.detail1 = d1;
    __threadfence();
  }
}

__device__ inline bool hasError(const SyState* state) { return ldVolatile(&state->error.code) != 0; }

/// Spins until `*word` carries `epoch` and a count >= `need`, and returns it (never 0). Returns 0
/// after recording an error (timeout, an epoch that is neither this step's nor the previous one) or
/// seeing another thread's (one recorded before the wait is read beside the first poll, so a wait
/// costs one round trip, not one for the error word and then one for the signal). While waiting
/// only this step's epoch (with a smaller count), the previous step's, or 0 (never written) is legal.
/// Polls (backing off with __nanosleep after the first 32 tries, so thousands of waiting threads do
/// not crowd the memory system) with acquire loads when `acquire` (the load that sees the word
/// orders the data it announces: no second load once it is there), else relaxed loads.
__device__ inline uint32_t waitWord(const uint32_t* word, uint32_t epoch, uint32_t need, SyState* state,
                                    uint64_t timeoutNs, uint32_t stage, uint32_t peer, uint32_t region,
                                    bool acquire = true) {
  const uint32_t prev = previousEpoch(epoch);
  const bool failedBefore = hasError(state);  // in flight with the first poll
  uint64_t start = 0;
  uint32_t spins = 0;
  while (true) {
    // The acquire: an acquire load, not a system fence (which waits for every memory operation of
    // the thread); the barrier after the wait (the block's, or the warp's where a warp waits for
    // itself) orders the other threads' reads.
    const uint32_t w = acquire ? ldAcquireSys(word) : ldRelaxedSys(word);
    if (failedBefore) return 0;
    const uint32_t e = signalEpoch(w);
    if (w != 0 && e == epoch) {
      if (signalCount(w) >= need) return w;
    } else if (w != 0 && e != prev) {
      recordError(state, E_BAD_EPOCH, stage, peer, region, e, epoch);
      return 0;
    }
    if (spins == 0) start = globalTimerNs();
    if (++spins > 32) __nanosleep(spins > 256 ? 256 : 64);
    if ((spins & 15u) == 0) {
      if (hasError(state)) return 0;
      if (globalTimerNs() - start > timeoutNs) {
        recordError(state, E_TIMEOUT, stage, peer, region, w, epoch);
        return 0;
      }
    }
  }
}

/// Waits until `*word` carries `epoch`, then checks its count against `maxCount`. Returns the count,
/// or -1 after recording an error (timeout, stale epoch, count too large) or seeing another thread's.
__device__ inline int waitSignal(const uint32_t* word, uint32_t epoch, uint32_t maxCount, SyState* state,
                                 uint64_t timeoutNs, uint32_t stage, uint32_t peer, uint32_t region,
                                 bool acquire = true) {
  const uint32_t w = waitWord(word, epoch, 0, state, timeoutNs, stage, peer, region, acquire);
  if (w == 0) return -1;
  const uint32_t c = signalCount(w);
  if (c > maxCount) {
    recordError(state, E_COUNT_TOO_LARGE, stage, peer, region, c, maxCount);
    return -1;
  }
  return static_cast<int>(c);
}

}  // namespace sy
