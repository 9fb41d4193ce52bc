// Phase stamps for profiling builds only (SY_PHASE_CLOCK: build-native.sh with
// SWITCHYARD_CUDA_PHASE_CLOCK=1; release builds compile every macro here to nothing). Thread 0 of
// block 0 of rank 0 (the kernel's last block under SY_PHASE_CLOCK_LAST_BLOCK: build-native.sh with
// SWITCHYARD_CUDA_PHASE_CLOCK=last; under SY_PHASE_CLOCK_ENDER, =ender, the block that completes
// the kernel's grid counter, which ends the stage, where the kernel has one: SY_CLOCK_ENDER, else
// block 0) reads clock64 at a stage kernel's marks and, at its end, prints one line:
//   syclock <kernel> <epoch> <ns from start to end (%globaltimer)> <cycles from start to each mark...>
//           <block 0's start> <the previous kernel's last block end> (both %globaltimer, ns)
// bench/kernel-times/phases.py turns the lines into medians per phase, and the last two fields of
// consecutive lines into the gap between two kernels and the time a kernel runs after its block 0.
#pragma once

#ifdef SY_PHASE_CLOCK
#include <cstdio>

#include "signal.cuh"

namespace sy {

/// The latest end of a block of rank 0's stage kernels (%globaltimer, ns): thread 0 of every block
/// raises it at the kernel's end, and the next kernel's block 0 reads it at its start, when every
/// block of the kernel before it has ended (one stream). Defined in dispatch.cu.
extern __device__ unsigned long long syClockLastEndNs;

/// Rank 0 alone prints: the driver writes a device printf's line in pieces, so two ranks sharing
/// one log cut each other's lines apart (2 GPUs, masked 1 and 128: no line whole), whatever the
/// host's stdout buffering.
struct PhaseClock {
  bool on = false;
  long long start = 0;
  long long marks[8] = {};
  unsigned long long startNs = 0;
  unsigned long long prevEndNs = 0;
  bool rank0 = false;
  bool print = false;  ///< this block prints its line at end()
  int n = 0;
  __device__ bool mine() const { return on; }
  __device__ void begin(int rank) {
    rank0 = rank == 0;
#if defined(SY_PHASE_CLOCK_LAST_BLOCK)
    on = rank0 && blockIdx.x == gridDim.x - 1 && threadIdx.x == 0;
    print = on;
#elif defined(SY_PHASE_CLOCK_ENDER)
    on = rank0 && threadIdx.x == 0;  // every block stamps; the ender prints (ender()), else block 0
    print = on && blockIdx.x == 0;
#else
    on = rank0 && blockIdx.x == 0 && threadIdx.x == 0;
    print = on;
#endif
    if (!mine()) return;
    prevEndNs = *reinterpret_cast<volatile unsigned long long*>(&syClockLastEndNs);
    startNs = globalTimerNs();
    start = clock64();
  }
  __device__ void mark() {
    if (mine() && n < 8) marks[n++] = clock64() - start;
  }
  /// Under SY_PHASE_CLOCK_ENDER: whether this block completed the kernel's grid counter (it prints
  /// instead of block 0). Nothing in the other modes.
  __device__ void ender(bool completed) {
#ifdef SY_PHASE_CLOCK_ENDER
    print = on && completed;
#else
    (void)completed;
#endif
  }
  /// Every thread of every block calls it where the block's work ends. The end is raised before
  /// the printf, so the next kernel's previous end is where the work ended, not the print.
  __device__ void end(const char* kernel, unsigned epoch) {
    if (rank0 && threadIdx.x == 0) atomicMax(&syClockLastEndNs, static_cast<unsigned long long>(globalTimerNs()));
    if (mine() && print) {
      mark();
      const unsigned long long ns = globalTimerNs() - startNs;
      printf("syclock %s %u %llu %d %lld %lld %lld %lld %lld %lld %lld %lld %llu %llu\n", kernel, epoch, ns, n, marks[0],
             marks[1], marks[2], marks[3], marks[4], marks[5], marks[6], marks[7], startNs, prevEndNs);
    }
  }
};

}  // namespace sy

#define SY_CLOCK_BEGIN(rank) \
  ::sy::PhaseClock syClock;   \
  syClock.begin(rank)
#define SY_CLOCK_MARK syClock.mark()
#define SY_CLOCK_ENDER(completed) syClock.ender(completed)
#define SY_CLOCK_END(kernel, epoch) syClock.end(kernel, epoch)
#else
#define SY_CLOCK_BEGIN(rank) \
  do {                       \
  } while (0)
#define SY_CLOCK_MARK \
  do {                \
  } while (0)
#define SY_CLOCK_ENDER(completed) \
  do {                            \
  } while (0)
#define SY_CLOCK_END(kernel, epoch) \
  do {                              \
  } while (0)
#endif
