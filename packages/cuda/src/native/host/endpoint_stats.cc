// Per-peer counters of an endpoint (sy_endpoint_enable_stats / sy_endpoint_stats): one device
// allocation holding SyStats' arrays, stamped by the stage kernels with plain stores (each entry
// once per step, so nothing needs resetting), read back and folded per peer on the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "endpoint.h"
#include "error.h"

namespace sy {
namespace {

uint64_t align8(uint64_t n) { return (n + 7) / 8 * 8; }

void requireStatsTarget(const sy_endpoint* ep, const char* call) {
  if (!ep->alive) SY_THROW(SY_ERR_STATE, call << ": the endpoint was destroyed");
  if (ep->bystander) SY_THROW(SY_ERR_STATE, call << ": PE " << ep->rt->rank << " runs no phase of this config");
}

}  // namespace

void enableStats(sy_endpoint* ep) {
  requireStatsTarget(ep, "sy_endpoint_enable_stats");
  if (ep->statsBuffer != nullptr) return;
  const uint64_t R = static_cast<uint64_t>(ep->ctx.p.ranks()), L = static_cast<uint64_t>(ep->ctx.p.localExperts());
  // Layout: dispatchSent [R, L] u32, combineSent [R] u32, combineReceived [R] u32, then (8-aligned)
  // dispatchWaitNs [L, R] u64, combineWaitNs [R] u64.
  const uint64_t u32s = align8((R * L + 2 * R) * 4);
  const uint64_t bytes = u32s + (L * R + R) * 8;
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  void* buf = nullptr;
  SY_CHECK_CUDA(cudaMalloc(&buf, bytes));
  const cudaError_t rc = cudaMemset(buf, 0, bytes);
  if (rc != cudaSuccess) {
    ignoreCuda(cudaFree(buf));
    SY_CHECK_CUDA(rc);
  }
  auto* b = static_cast<uint8_t*>(buf);
  SyStats& s = ep->ctx.stats;
  s.dispatchSent = reinterpret_cast<uint32_t*>(b);
  s.combineSent = s.dispatchSent + R * L;
  s.combineReceived = s.combineSent + R;
  s.dispatchWaitNs = reinterpret_cast<uint64_t*>(b + u32s);
  s.combineWaitNs = s.dispatchWaitNs + L * R;
  ep->statsBuffer = buf;
  ep->statsBytes = bytes;
  ep->deviceBytes += bytes;
}

void freeStats(sy_endpoint* ep) {
  if (ep->statsBuffer != nullptr) ignoreCuda(cudaFree(ep->statsBuffer));
  ep->statsBuffer = nullptr;
  ep->statsBytes = 0;
  ep->ctx.stats = SyStats{};
}

void readStats(sy_endpoint* ep, cudaStream_t stream, size_t ranks, uint32_t* dispatchSent, uint32_t* dispatchReceived,
               uint32_t* combineSent, uint32_t* combineReceived, uint64_t* dispatchWaitNs, uint64_t* combineWaitNs) {
  requireStatsTarget(ep, "sy_endpoint_stats");
  if (ep->statsBuffer == nullptr) {
    SY_THROW(SY_ERR_STATE, "sy_endpoint_stats: stats are off for this endpoint; call sy_endpoint_enable_stats first");
  }
  const int R = ep->ctx.p.ranks(), L = ep->ctx.p.localExperts();
  SY_REQUIRE(ranks == static_cast<size_t>(R),
             "sy_endpoint_stats: ranks " << ranks << ", but the config has " << R << " ranks");
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  SY_CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<uint8_t> host(ep->statsBytes);
  SY_CHECK_CUDA(cudaMemcpy(host.data(), ep->statsBuffer, ep->statsBytes, cudaMemcpyDeviceToHost));
  std::vector<int32_t> counts(static_cast<size_t>(R) * L);
  SY_CHECK_CUDA(cudaMemcpy(counts.data(), ep->ctx.counts, counts.size() * 4, cudaMemcpyDeviceToHost));
  const uint8_t* base = host.data();
  const auto* sent = reinterpret_cast<const uint32_t*>(base);
  const uint32_t* back = sent + static_cast<size_t>(R) * L;
  const uint32_t* announced = back + R;
  const auto* dWait = reinterpret_cast<const uint64_t*>(base + align8((static_cast<uint64_t>(R) * L + 2 * R) * 4));
  const uint64_t* cWait = dWait + static_cast<size_t>(L) * R;
  for (int peer = 0; peer < R; ++peer) {
    uint32_t out = 0, in = 0;
    uint64_t wait = 0;
    for (int e = 0; e < L; ++e) {
      out += sent[peer * L + e];
      in += static_cast<uint32_t>(counts[e * R + peer]);
      wait = std::max(wait, dWait[e * R + peer]);
    }
    if (dispatchSent) dispatchSent[peer] = out;
    if (dispatchReceived) dispatchReceived[peer] = in;
    if (combineSent) combineSent[peer] = back[peer];
    if (combineReceived) combineReceived[peer] = announced[peer];
    if (dispatchWaitNs) dispatchWaitNs[peer] = wait;
    if (combineWaitNs) combineWaitNs[peer] = cWait[peer];
  }
}

}  // namespace sy
