// The contiguous layout's share of an endpoint: its local buffers (recvX, recvScales, recvMeta at
// core's offsets), the route scratch and receive tables (kernels/contiguous.cuh), and the SM
// budget of its kernels. Allocated after the symmetric heap, freed with the endpoint.
#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include "../kernels/contiguous.cuh"
#include "../kernels/launch_contiguous.h"
#include "endpoint.h"
#include "error.h"

namespace sy {

namespace {

/// Largest expert count the route and wait kernels' shared memory holds.
constexpr int kMaxContigExperts = 4096;

template <typename T>
T* deviceArray(sy_endpoint* ep, size_t count) {
  void* p = nullptr;
  const size_t bytes = sizeof(T) * (count > 0 ? count : 1);
  SY_CHECK_CUDA(cudaMalloc(&p, bytes));
  SY_CHECK_CUDA(cudaMemset(p, 0, bytes));
  ep->deviceBytes += bytes;
  return static_cast<T*>(p);
}

/// (Re)allocates the local output: all of core's local regions (worst case), or recvMeta alone
/// (exact output: recvX / recvScales are the caller's, given to sy_dispatch_recv_into).
void allocOutput(sy_endpoint* ep, bool exact) {
  SyContig& g = ep->ctx.contig;
  const SyParams& p = ep->ctx.p;
  if (g.local != nullptr) {
    SY_CHECK_CUDA(cudaFree(g.local));
    ep->deviceBytes -= ep->localBytes > 0 ? ep->localBytes : 1;
    g.local = nullptr;
  }
  g.recvX = g.recvScales = g.recvMeta = nullptr;
  ep->localBytes = exact ? p.bytes(R_RECV_META) : localBytesOf(p);
  g.local = deviceArray<uint8_t>(ep, ep->localBytes);
  g.recvMeta = exact ? g.local : g.local + p.offset(R_RECV_META);
  if (!exact) {
    g.recvX = g.local + p.offset(R_RECV_X);
    g.recvScales = p.bytes(R_RECV_SCALES) > 0 ? g.local + p.offset(R_RECV_SCALES) : nullptr;
  }
  ep->exactOutput = exact;
  ep->exactRows = 0;
}

}  // namespace

uint64_t localBytesOf(const SyParams& p) {
  uint64_t end = 0;
  for (int r = R_RECV_X; r <= R_RECV_META; ++r) {
    if (p.bytes(r) > 0 && p.offset(r) + p.bytes(r) > end) end = p.offset(r) + p.bytes(r);
  }
  return end;
}

int defaultContiguousBlocks(int smCount, int configured) {
  const int blocks = configured >= 1 ? configured : 24;
  return blocks < smCount ? blocks : smCount;
}

void checkContiguous(const SyParams& p) {
  const int E = p.ranks() * p.localExperts();
  if (E > kMaxContigExperts) {
    SY_THROW(SY_ERR_UNSUPPORTED, "sy_endpoint_create: the contiguous layout supports at most "
                                     << kMaxContigExperts << " experts, this config has " << E);
  }
  const int Q = p.stagingTokens();
  if (Q == 0) return;
  // Bounded staging: the kernels index [3, R] signal words and [2, R, Cq] staged rows.
  SY_REQUIRE(Q > 0 && Q < p.maxTokens(), "sy_endpoint_create: stagingTokens " << Q << " must be in [1, maxTokensPerRank "
                                                                               << p.maxTokens() << ") or 0");
  const uint64_t R = static_cast<uint64_t>(p.ranks()), rows = 2 * R * p.roundRows();
  const uint64_t need[][2] = {{R_DISPATCH_SIGNAL, 3 * R * 4},
                              {R_DISPATCH_X, rows * p.rowBytes()},
                              {R_DISPATCH_SCALES, rows * p.scalesPerRow() * 4},
                              {R_DISPATCH_META, rows * 16}};
  for (const auto& n : need) {
    SY_REQUIRE(p.bytes(static_cast<int>(n[0])) >= n[1],
               "sy_endpoint_create: region " << kRegionNames[n[0]] << " has " << p.bytes(static_cast<int>(n[0]))
                                             << " bytes, bounded staging of " << Q << " tokens needs " << n[1]
                                             << " (parameters not from core's layout?)");
  }
}

void allocContiguous(sy_endpoint* ep) {
  const SyParams& p = ep->ctx.p;
  const int R = p.ranks(), L = p.localExperts(), E = R * L, M = p.maxTokens(), K = p.topK();
  checkContiguous(p);
  const int warps = routeWarps(E, M, kRouteSmemBytes);
  SY_REQUIRE(warps >= 1, "sy_endpoint_create: no route chunk fits " << E << " experts");
  SyContig& g = ep->ctx.contig;
  g.chunkTokens = 32 * warps;
  const int chunks = (M + g.chunkTokens - 1) / g.chunkTokens;
  g.blocks = defaultContiguousBlocks(ep->rt->smCount, ep->rt->contiguousBlocks);
  allocOutput(ep, false);
  g.localPos = deviceArray<int32_t>(ep, static_cast<size_t>(M) * K);
  g.chunkCount = deviceArray<int32_t>(ep, static_cast<size_t>(chunks) * E);
  g.regionBase = deviceArray<int32_t>(ep, E);
  g.regionTotal = deviceArray<int32_t>(ep, E);
  g.staged = deviceArray<int32_t>(ep, R);
  g.offsets = deviceArray<int32_t>(ep, L + 1);
  g.expertCount = deviceArray<int32_t>(ep, L);
  g.pairStart = deviceArray<int32_t>(ep, E);
  g.stageStart = deviceArray<int32_t>(ep, E);
  g.roundFill = deviceArray<int32_t>(ep, 2 * R);
  g.roundDone = deviceArray<uint32_t>(ep, 2 * R);
  if (p.stagingTokens() > 0) {
    // Loaded now rather than at a first launch that could wait behind the running round sender
    // (CUDA lazy loading), which waits for this rank's own receive kernels.
    SY_CHECK_CUDA(loadQuantizeKernels());
    SY_CHECK_CUDA(loadRouteKernels());
    SY_CHECK_CUDA(loadDispatchRecvContiguousKernels());
    SY_CHECK_CUDA(loadRoundKernels());
    SY_CHECK_CUDA(loadRoundSendKernels());
    SY_CHECK_CUDA(loadCombineSendContiguousKernels());
    SY_CHECK_CUDA(loadCombineRecvContiguousKernels());
    SY_CHECK_CUDA(cudaStreamCreateWithFlags(&ep->rounds.stream, cudaStreamNonBlocking));
    SY_CHECK_CUDA(cudaEventCreateWithFlags(&ep->rounds.fork, cudaEventDisableTiming));
    SY_CHECK_CUDA(cudaEventCreateWithFlags(&ep->rounds.join, cudaEventDisableTiming));
  }
  g.done = deviceArray<uint32_t>(ep, 4);
}

void freeContiguous(sy_endpoint* ep) {
  SyContig& g = ep->ctx.contig;
  void* ptrs[] = {g.local,   g.localPos,    g.chunkCount, g.regionBase, g.regionTotal, g.staged,
                  g.offsets, g.expertCount, g.pairStart,  g.stageStart, g.roundFill, g.roundDone, g.done};
  for (void* q : ptrs) ignoreCuda(cudaFree(q));  // teardown: nothing to report, nothing left behind
  g = SyContig{};
  if (ep->rounds.stream != nullptr) ignoreCuda(cudaStreamDestroy(ep->rounds.stream));
  if (ep->rounds.fork != nullptr) ignoreCuda(cudaEventDestroy(ep->rounds.fork));
  if (ep->rounds.join != nullptr) ignoreCuda(cudaEventDestroy(ep->rounds.join));
  ep->rounds = RoundStream{};
}

void setOutput(sy_endpoint* ep, bool exact) {
  const char* call = "sy_endpoint_set_output";
  SY_REQUIRE(ep->alive, call << ": the endpoint was destroyed");
  if (!ep->ctx.p.v[P_LAYOUT_CONTIGUOUS]) {
    SY_THROW(SY_ERR_UNSUPPORTED, call << ": exact-size output is a mode of the contiguous layout; the masked "
                                         "layout's output is its fixed dispatchX regions");
  }
  if (ep->bystander || exact == ep->exactOutput) return;
  if (ep->phase != kDispatchSend) {
    SY_THROW(SY_ERR_PHASE, call << ": between steps only (the endpoint is within a step; finish it with "
                                   "sy_combine_recv)");
  }
  if (!ep->phaseChecks) {
    SY_THROW(SY_ERR_STATE, call << ": a step of this endpoint was captured into a graph, which holds its output "
                                   "buffers; create another endpoint for exact-size output");
  }
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  SY_CHECK_CUDA(cudaDeviceSynchronize());  // the previous step may still read recvMeta
  allocOutput(ep, exact);
}

uint8_t* localRegion(const sy_endpoint* ep, int region) {
  const SyContig& g = ep->ctx.contig;
  if (ep->ctx.p.bytes(region) == 0) return nullptr;
  switch (region) {
    case R_RECV_X: return ep->exactOutput ? nullptr : g.recvX;
    case R_RECV_SCALES: return ep->exactOutput ? nullptr : g.recvScales;
    case R_RECV_META: return g.recvMeta;
    default: return nullptr;
  }
}

void setContiguousBlocks(sy_endpoint* ep, int blocks) {
  SY_REQUIRE(ep->alive, "sy_endpoint_set_blocks: the endpoint was destroyed");
  SY_REQUIRE(blocks >= 1 && blocks <= 65535, "sy_endpoint_set_blocks: blocks " << blocks << " is outside [1, 65535]");
  ep->ctx.contig.blocks = blocks;
}

}  // namespace sy
