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
  const uint64_t R = static_cast<uint64_t>(ep->ctx.p.ranks());
  // Layout: dispatchSent, dispatchRecords, combineSent, combineReceived [R] u32 each, then
  // (8-aligned) dispatchWaitNs, combineWaitNs [R] u64 each.
  const uint64_t u32s = align8(4 * R * 4);
  const uint64_t bytes = u32s + 2 * R * 8;
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
  s.dispatchRecords = s.dispatchSent + R;
  s.combineSent = s.dispatchRecords + R;
  s.combineReceived = s.combineSent + R;
  s.dispatchWaitNs = reinterpret_cast<uint64_t*>(b + u32s);
  s.combineWaitNs = s.dispatchWaitNs + R;
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
  const int R = ep->ctx.p.ranks();
  SY_REQUIRE(ranks == static_cast<size_t>(R),
             "sy_endpoint_stats: ranks " << ranks << ", but the config has " << R << " ranks");
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  SY_CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<uint8_t> host(ep->statsBytes);
  SY_CHECK_CUDA(cudaMemcpy(host.data(), ep->statsBuffer, ep->statsBytes, cudaMemcpyDeviceToHost));
  const auto* u = reinterpret_cast<const uint32_t*>(host.data());
  const auto* w = reinterpret_cast<const uint64_t*>(host.data() + align8(4 * static_cast<uint64_t>(R) * 4));
  for (int peer = 0; peer < R; ++peer) {
    if (dispatchSent) dispatchSent[peer] = u[peer];
    if (dispatchReceived) dispatchReceived[peer] = u[R + peer];
    if (combineSent) combineSent[peer] = u[2 * R + peer];
    if (combineReceived) combineReceived[peer] = u[3 * R + peer];
    if (dispatchWaitNs) dispatchWaitNs[peer] = w[peer];
    if (combineWaitNs) combineWaitNs[peer] = w[R + peer];
  }
}

}  // namespace sy
