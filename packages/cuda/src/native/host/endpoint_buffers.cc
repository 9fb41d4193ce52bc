// An endpoint's buffers besides the symmetric heap: the local allocation (core's local regions:
// masked recvX, recvScales, recvMeta; contiguous recvMeta), the receive tables and the send plan
// (kernels/params.cuh SyTables, SyPlan) in one device allocation, the contiguous SM budget, and
// exact-size output. Allocated after the symmetric heap, freed with the endpoint.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "../kernels/params.cuh"
#include "endpoint.h"
#include "error.h"

namespace sy {

namespace {

/// Largest world the kernels take: combine send keeps a prefix over sources in shared memory.
constexpr int kMaxRanks = 1024;
/// Largest expert count: the send plan's and the receive tables' shared memory.
constexpr int kMaxExperts = 16384;

}  // namespace

uint64_t localBytesOf(const SyParams& p) {
  uint64_t end = 0;
  for (int r = 0; r < R_REGION_COUNT; ++r) {
    if (p.isLocalRegion(r) && p.bytes(r) > 0 && p.offset(r) + p.bytes(r) > end) end = p.offset(r) + p.bytes(r);
  }
  return end;
}

int defaultContiguousBlocks(int smCount, int configured) {
  const int blocks = configured >= 1 ? configured : 24;
  return blocks < smCount ? blocks : smCount;
}

void checkSupported(const SyParams& p) {
  if (p.topK() > kMaxTopK) {
    SY_THROW(SY_ERR_UNSUPPORTED, "sy_endpoint_create: topK " << p.topK() << " is more than the kernels' " << kMaxTopK
                                                             << " (a token's slots are one warp's lanes)");
  }
  if (p.ranks() > kMaxRanks) {
    SY_THROW(SY_ERR_UNSUPPORTED, "sy_endpoint_create: " << p.ranks() << " ranks, the kernels take at most " << kMaxRanks);
  }
  if (p.experts() > kMaxExperts) {
    SY_THROW(SY_ERR_UNSUPPORTED,
             "sy_endpoint_create: " << p.experts() << " experts, the kernels take at most " << kMaxExperts);
  }
}

namespace {

uint64_t align256(uint64_t n) { return (n + 255) / 256 * 256; }

/// Byte offsets of the outbox's dispatch arrays (rows, scales, routes, counts, destRow) and its end.
struct OutboxPlan {
  uint64_t rows, scales, routes, counts, destRow, dispatchEnd, combineEnd;
};

OutboxPlan outboxPlan(const SyParams& p) {
  const uint64_t R = p.ranks(), M = p.maxTokens(), S = p.scalesPerRow(), W = p.routeWords();
  const uint64_t words = p.contiguous() ? p.experts() : p.localExperts();
  OutboxPlan o{};
  o.rows = 0;
  o.scales = align256(o.rows + R * M * p.rowBytes());
  o.routes = align256(o.scales + R * M * S * 4);
  o.counts = align256(o.routes + R * M * W * 4);
  o.destRow = align256(o.counts + R * words * 4);
  o.dispatchEnd = align256(o.destRow + R * M * 4);
  // Combine send: a row a record (R * M at most), J of them a record with the weights at home.
  const uint64_t perRecord = p.combineAtHome() ? static_cast<uint64_t>(p.slotsPerRank()) : 1;
  o.combineEnd = align256(R * M * perRecord * p.hidden() * 2);
  return o;
}

}  // namespace

uint64_t outboxBytesOf(const SyParams& p) {
  const OutboxPlan o = outboxPlan(p);
  return std::max(o.dispatchEnd, o.combineEnd);
}

SyOutbox outboxOf(const SyParams& p, uint8_t* base) {
  const OutboxPlan o = outboxPlan(p);
  SyOutbox out{};
  out.rows = base + o.rows;
  out.scales = reinterpret_cast<float*>(base + o.scales);
  out.routes = reinterpret_cast<int32_t*>(base + o.routes);
  out.counts = reinterpret_cast<uint32_t*>(base + o.counts);
  out.destRow = reinterpret_cast<int32_t*>(base + o.destRow);
  out.combine = reinterpret_cast<uint16_t*>(base);  // shares the bytes: the send stages never overlap
  return out;
}

void allocBuffers(sy_endpoint* ep) {
  const SyParams& p = ep->ctx.p;
  const uint64_t R = p.ranks(), L = p.localExperts(), E = p.experts(), M = p.maxTokens(), K = p.topK();
  checkSupported(p);
  ep->localBytes = localBytesOf(p);
  if (ep->localBytes > 0) {
    SY_CHECK_CUDA(cudaMalloc(&ep->ctx.local, ep->localBytes));
    SY_CHECK_CUDA(cudaMemset(ep->ctx.local, 0, ep->localBytes));
    ep->deviceBytes += ep->localBytes;
  }
  // Tables [rows] taken, then the plan's [B] blockBad and [B] blockMarks (u64, first: 8-byte
  // aligned; B = a wave of blocks), [L*R] counts, [L*R] pairStart, [L+1] offsets, [L] expertCount,
  // [R] records, [R] named; plan [M*K] entryIndex, [M*K] recordIndex, [E+R] totals, [B, E+R] blockCounts.
  const uint64_t B = static_cast<uint64_t>(ep->wave);
  const uint64_t takenBytes = (p.rows() + 2 * B) * sizeof(uint64_t);
  const uint64_t ints = 2 * L * R + (L + 1) + L + 2 * R + 2 * M * K + (B + 1) * (E + R);
  SY_CHECK_CUDA(cudaMalloc(&ep->scratch, takenBytes + ints * 4));
  SY_CHECK_CUDA(cudaMemset(ep->scratch, 0, takenBytes + ints * 4));
  ep->deviceBytes += takenBytes + ints * 4;
  SyTables& t = ep->ctx.t;
  t.taken = static_cast<uint64_t*>(ep->scratch);
  SyPlan& pl = ep->ctx.plan;
  pl.blocks = ep->wave;
  pl.blockBad = t.taken + p.rows();
  pl.blockMarks = pl.blockBad + B;
  int32_t* q = reinterpret_cast<int32_t*>(pl.blockMarks + B);
  t.counts = q;
  t.pairStart = t.counts + L * R;
  t.offsets = t.pairStart + L * R;
  t.expertCount = t.offsets + L + 1;
  t.records = t.expertCount + L;
  t.named = t.records + R;
  pl.entryIndex = t.named + R;
  pl.recordIndex = pl.entryIndex + M * K;
  pl.totals = pl.recordIndex + M * K;
  pl.blockCounts = pl.totals + E + R;
}

void freeBuffers(sy_endpoint* ep) {
  ignoreCuda(cudaFree(ep->ctx.local));  // teardown: nothing to report, nothing left behind
  ignoreCuda(cudaFree(ep->scratch));
  ep->ctx.local = nullptr;
  ep->scratch = nullptr;
  ep->ctx.t = SyTables{};
  ep->ctx.plan = SyPlan{};
}

void setOutput(sy_endpoint* ep, bool exact) {
  const char* call = "sy_endpoint_set_output";
  SY_REQUIRE(ep->alive, call << ": the endpoint was destroyed");
  if (!ep->ctx.p.contiguous()) {
    SY_THROW(SY_ERR_UNSUPPORTED, call << ": exact-size output is a mode of the contiguous layout; the masked "
                                         "layout's output is its fixed recvX blocks");
  }
  if (ep->bystander || exact == ep->exactOutput) return;
  if (ep->phase != kDispatchSend) {
    SY_THROW(SY_ERR_PHASE, call << ": between steps only (the endpoint is within a step; finish it with "
                                   "sy_combine_recv)");
  }
  if (!ep->phaseChecks) {
    SY_THROW(SY_ERR_STATE, call << ": a step of this endpoint was captured into a graph; create another endpoint "
                                   "for exact-size output");
  }
  ep->exactOutput = exact;
  ep->exactRows = 0;
}

uint8_t* regionAddress(const sy_endpoint* ep, int region) {
  const SyParams& p = ep->ctx.p;
  if (p.bytes(region) == 0) return nullptr;
  return (p.isLocalRegion(region) ? ep->ctx.local : ep->ctx.heap) + p.offset(region);
}

void setBlocks(sy_endpoint* ep, int blocks) {
  SY_REQUIRE(ep->alive, "sy_endpoint_set_blocks: the endpoint was destroyed");
  SY_REQUIRE(blocks >= 1 && blocks <= 65535, "sy_endpoint_set_blocks: blocks " << blocks << " is outside [1, 65535]");
  if (ep->ctx.p.contiguous()) {
    ep->budget = blocks;
  } else {  // SMs: the masked grids' limit, at most one wave
    ep->ctx.maxBlocks = static_cast<int>(std::min<int64_t>(ep->wave, static_cast<int64_t>(blocks) * ep->blocksPerSm));
  }
}

}  // namespace sy
