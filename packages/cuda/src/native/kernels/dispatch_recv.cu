// Dispatch receive (masked layout): waits for the signal of every (local expert, source rank)
// region, checks it and records the counts. The rows are already in place (senders wrote them
// into this rank's dispatchX / dispatchScales / dispatchMeta), so nothing is copied.
//
///  dispatchSignal Shape: [L, R]   u32 (epoch, count + 1) from source s for local expert e at [e][s]
///  counts         Shape: [L, R]   int32 out (local buffer): rows from s for e, 0 after an error
///  stats.dispatchWaitNs Shape: [L, R] u64 ns from this thread's start to the signal's arrival (stats on)
//
// Grid: one thread per signal. Each wait is bounded by ctx.timeoutNs (%globaltimer); a timeout,
// a count above maxTokensPerRank or an epoch from neither this step nor the previous one is
// recorded in the error word (stage, peer, region) and the thread exits.
#include "launch.h"
#include "signal.cuh"

namespace sy {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) dispatchRecvKernel(SyCtx c) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts();
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i >= L * R) return;
  const int s = i % R;
  const uint32_t epoch = epochOfStep(ldVolatile(&c.state->step));
  const uint32_t* words = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_DISPATCH_SIGNAL));
  const uint64_t t0 = globalTimerNs();
  int count = -1;
  if (!hasError(c.state)) {
    count = waitSignal(words + i, epoch, static_cast<uint32_t>(p.maxTokens()), c.state, c.timeoutNs,
                       S_DISPATCH_RECV, static_cast<uint32_t>(s), R_DISPATCH_SIGNAL);
  }
  c.counts[i] = count < 0 ? 0 : count;
  if (c.stats.dispatchWaitNs != nullptr) c.stats.dispatchWaitNs[i] = globalTimerNs() - t0;
}

}  // namespace

cudaError_t launchDispatchRecv(const SyCtx& ctx, cudaStream_t stream) {
  const int n = ctx.p.ranks() * ctx.p.localExperts();
  dispatchRecvKernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(ctx);
  return cudaGetLastError();
}

}  // namespace sy
