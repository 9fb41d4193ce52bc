// The NCCL baseline (baseline.h): communicator, buffers, and the two timed halves.
#include "baseline.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "../../../src/native/host/error.h"
#include "../../../src/native/host/params_check.h"
#include "../kernels/launch_baseline.h"
#include "../kernels/launch_route.h"

#if SY_WITH_NCCL
#include <nccl.h>

#define SY_CHECK_NCCL(expr)                                                                   \
  do {                                                                                        \
    ncclResult_t sy_nc_ = (expr);                                                             \
    if (sy_nc_ != ncclSuccess) SY_THROW(SY_ERR_NCCL, #expr << " failed: " << ncclGetErrorString(sy_nc_)); \
  } while (0)
#endif

namespace sy {

#if SY_WITH_NCCL

namespace {

ncclComm_t commOf(const sy_baseline* bl) { return static_cast<ncclComm_t>(bl->nccl->comm); }

template <typename T>
T* deviceArray(sy_baseline* bl, size_t count) {
  void* p = nullptr;
  const size_t bytes = sizeof(T) * (count > 0 ? count : 1);
  SY_CHECK_CUDA(cudaMalloc(&p, bytes));
  SY_CHECK_CUDA(cudaMemset(p, 0, bytes));
  bl->deviceBytes += bytes;
  return static_cast<T*>(p);
}

/// Ints in the tables block: counts [L*R], offsets [L+1], expertCount [L], pairStart [L*R], stageStart [L*R].
size_t tableInts(int L, int R) { return 3 * static_cast<size_t>(L) * R + 2 * L + 1; }

}  // namespace

void ncclUniqueIdBytes(uint8_t* out) {
  static_assert(sizeof(ncclUniqueId) == SY_UNIQUE_ID_BYTES, "NCCL unique id size changed");
  ncclUniqueId id;
  SY_CHECK_NCCL(ncclGetUniqueId(&id));
  std::memcpy(out, &id, sizeof(id));
}

sy_nccl* createNccl(const uint8_t* uniqueId, int rank, int ranks, int device) {
  SY_REQUIRE(uniqueId != nullptr, "sy_nccl_create: unique_id is NULL");
  SY_REQUIRE(ranks >= 1 && rank >= 0 && rank < ranks, "sy_nccl_create: rank " << rank << " is outside [0, " << ranks << ")");
  // NVLink multicast stays off in every process (DESIGN.md), whatever the caller's environment says.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  SY_CHECK_CUDA(cudaSetDevice(device));
  ncclUniqueId id;
  std::memcpy(&id, uniqueId, sizeof(id));
  ncclComm_t comm = nullptr;
  SY_CHECK_NCCL(ncclCommInitRank(&comm, ranks, id, rank));
  auto* nc = new sy_nccl();
  nc->comm = comm;
  nc->rank = rank;
  nc->ranks = ranks;
  nc->device = device;
  ncclGetVersion(&nc->version);
  nc->alive = true;
  return nc;
}

void destroyNccl(sy_nccl* nc) {
  if (nc->alive) {
    nc->alive = false;
    SY_CHECK_NCCL(ncclCommDestroy(static_cast<ncclComm_t>(nc->comm)));
  }
}

sy_baseline* createBaseline(sy_nccl* nc, const uint64_t* params, size_t count, int smCount) {
  SY_REQUIRE(nc != nullptr && nc->alive, "sy_baseline_create: the communicator is NULL or destroyed");
  SyParams p{};
  validateParamBlock(params, count, "sy_baseline_create", &p.localRegions);  // the block the C layout computes, nothing else
  std::copy(params, params + kParamCount, p.v);
  SY_REQUIRE(p.v[P_LAYOUT_CONTIGUOUS] != 0, "sy_baseline_create: pass the contiguous layout's parameters");
  SY_REQUIRE(p.ranks() == nc->ranks, "sy_baseline_create: config has " << p.ranks() << " ranks, NCCL " << nc->ranks);
  if (p.dpSize() != 1) SY_THROW(SY_ERR_UNSUPPORTED, "sy_baseline_create: the NCCL baseline needs dpSize 1");
  if (p.quantize() && p.maxTokens() > 65535) {
    SY_THROW(SY_ERR_UNSUPPORTED, "sy_baseline_create: at most 65535 tokens per rank (the quantisation grid)");
  }
  const int R = p.ranks(), L = p.localExperts(), E = R * L, M = p.maxTokens(), K = p.topK();
  const uint64_t C = p.v[P_ROWS_PER_SOURCE];
  const uint64_t rowBytes = p.rowBytes(), scaleBytes = static_cast<uint64_t>(p.scalesPerRow()) * 4;
  auto* bl = new sy_baseline();
  bl->nccl = nc;
  try {
    SY_CHECK_CUDA(cudaSetDevice(nc->device));
    bl->ctx.p = p;
    bl->ctx.rank = nc->rank;
    SyContig& g = bl->ctx.contig;
    const int warps = routeWarps(E, M, kRouteSmemBytes);
    SY_REQUIRE(warps >= 1, "sy_baseline_create: no route chunk fits " << E << " experts");
    g.chunkTokens = 32 * warps;
    g.blocks = smCount;
    g.localPos = deviceArray<int32_t>(bl, static_cast<size_t>(M) * K);
    g.chunkCount = deviceArray<int32_t>(bl, static_cast<size_t>((M + g.chunkTokens - 1) / g.chunkTokens) * E);
    g.regionBase = deviceArray<int32_t>(bl, E);
    g.regionTotal = deviceArray<int32_t>(bl, E);
    g.staged = deviceArray<int32_t>(bl, R);
    g.done = deviceArray<uint32_t>(bl, 4);
    for (int r = R_RECV_X; r <= R_RECV_META; ++r) {
      if (p.bytes(r) > 0) bl->out[r - R_RECV_X] = deviceArray<uint8_t>(bl, p.bytes(r));
    }
    if (p.quantize()) {
      bl->ctx.quantX = deviceArray<uint8_t>(bl, static_cast<size_t>(M) * p.hidden());
      bl->ctx.quantScales = deviceArray<float>(bl, static_cast<size_t>(M) * (p.hidden() / 128));
    }
    bl->tables = deviceArray<int32_t>(bl, tableInts(L, R));
    bl->ctx.counts = bl->tables;
    g.offsets = bl->tables + E;
    g.expertCount = g.offsets + L + 1;
    g.pairStart = g.expertCount + L;
    g.stageStart = g.pairStart + E;
    bl->countsIn = deviceArray<int32_t>(bl, E);
    const size_t rows = static_cast<size_t>(R) * C;
    bl->sendX = deviceArray<uint8_t>(bl, rows * rowBytes);
    bl->stageX = deviceArray<uint8_t>(bl, rows * rowBytes);
    if (scaleBytes) {
      bl->sendScales = deviceArray<uint8_t>(bl, rows * scaleBytes);
      bl->stageScales = deviceArray<uint8_t>(bl, rows * scaleBytes);
    }
    bl->sendMeta = deviceArray<uint8_t>(bl, rows * 16);
    bl->stageMeta = deviceArray<uint8_t>(bl, rows * 16);
    bl->backSend = deviceArray<uint8_t>(bl, rows * p.hidden() * 2);
    bl->backRecv = deviceArray<uint8_t>(bl, rows * p.hidden() * 2);
    SY_CHECK_CUDA(cudaMallocHost(&bl->hostIn, sizeof(int32_t) * (E + R)));
    SY_CHECK_CUDA(cudaMallocHost(&bl->hostTables, sizeof(int32_t) * tableInts(L, R)));
    bl->sendRows.assign(R, 0);
    bl->recvRows.assign(R, 0);
    bl->alive = true;
  } catch (...) {
    destroyBaseline(bl);
    delete bl;
    throw;
  }
  return bl;
}

void destroyBaseline(sy_baseline* bl) {
  // Best effort: a failure here changes nothing for the caller, and must not be left for a later launch.
  ignoreCuda(cudaDeviceSynchronize());
  SyContig& g = bl->ctx.contig;
  void* ptrs[] = {g.localPos,     g.chunkCount,       g.regionBase,  g.regionTotal, g.staged,     g.done,
                  bl->out[0],     bl->out[1],         bl->out[2],     bl->ctx.quantX, bl->ctx.quantScales, bl->tables, bl->countsIn,
                  bl->sendX,      bl->stageX,         bl->sendScales, bl->stageScales,  bl->sendMeta, bl->stageMeta,
                  bl->backSend,   bl->backRecv};
  for (void* q : ptrs) ignoreCuda(cudaFree(q));
  ignoreCuda(cudaFreeHost(bl->hostIn));
  ignoreCuda(cudaFreeHost(bl->hostTables));
  bl->ctx = BaselineCtx{};
  bl->alive = false;
}

void baselineDispatch(sy_baseline* bl, const void* x, const float* scales, const int32_t* topkIdx, int T,
                      cudaStream_t stream) {
  SY_REQUIRE(bl->alive, "sy_baseline_dispatch: the baseline was destroyed");
  const SyParams& p = bl->ctx.p;
  SY_REQUIRE(T >= 0 && T <= p.maxTokens(), "sy_baseline_dispatch: num_tokens " << T << " is outside [0, " << p.maxTokens() << "]");
  SY_CHECK_CUDA(cudaSetDevice(bl->nccl->device));
  const int R = p.ranks(), L = p.localExperts(), E = R * L;
  const uint64_t C = p.v[P_ROWS_PER_SOURCE];
  const uint64_t rowBytes = p.rowBytes(), scaleBytes = static_cast<uint64_t>(p.scalesPerRow()) * 4;
  ncclComm_t comm = commOf(bl);
  const uint8_t* src = static_cast<const uint8_t*>(x);
  clearStaleError("sy_baseline_dispatch");
  if (p.quantize()) {
    SY_CHECK_CUDA(launchQuantize(bl->ctx, x, T, 0, stream));
    src = bl->ctx.quantX;
    scales = bl->ctx.quantScales;
  }
  // 1. Rows per (destination, expert), then the count exchange.
  SY_CHECK_CUDA(launchRoute(bl->ctx, topkIdx, T, stream));
  SY_CHECK_NCCL(ncclGroupStart());
  for (int peer = 0; peer < R; ++peer) {
    SY_CHECK_NCCL(ncclSend(bl->ctx.contig.regionTotal + peer * L, L, ncclInt32, peer, comm, stream));
    SY_CHECK_NCCL(ncclRecv(bl->countsIn + peer * L, L, ncclInt32, peer, comm, stream));
  }
  SY_CHECK_NCCL(ncclGroupEnd());
  // 2. The host synchronisation: splits and the receive tables are computed here.
  SY_CHECK_CUDA(cudaMemcpyAsync(bl->hostIn, bl->countsIn, sizeof(int32_t) * E, cudaMemcpyDeviceToHost, stream));
  SY_CHECK_CUDA(cudaMemcpyAsync(bl->hostIn + E, bl->ctx.contig.staged, sizeof(int32_t) * R, cudaMemcpyDeviceToHost, stream));
  SY_CHECK_CUDA(cudaStreamSynchronize(stream));
  int32_t* counts = bl->hostTables;
  int32_t* offsets = counts + E;
  int32_t* expertCount = offsets + L + 1;
  int32_t* pairStart = expertCount + L;
  int32_t* stageStart = pairStart + E;
  std::vector<int32_t> rows(L);
  for (int s = 0; s < R; ++s) {
    bl->recvRows[s] = 0;
    for (int e = 0; e < L; ++e) {
      counts[e * R + s] = bl->hostIn[s * L + e];
      bl->recvRows[s] += bl->hostIn[s * L + e];
    }
    bl->sendRows[s] = bl->hostIn[E + s];
  }
  buildRecvTables(counts, L, R, static_cast<int>(C), static_cast<int>(p.v[P_EXPERT_ALIGNMENT]), rows.data(), offsets,
                  expertCount, pairStart, stageStart);
  SY_CHECK_CUDA(cudaMemcpyAsync(bl->tables, bl->hostTables, sizeof(int32_t) * tableInts(L, R), cudaMemcpyHostToDevice,
                                stream));
  // 3. Pack per destination, all-to-all with splits, lay out per expert.
  SY_CHECK_CUDA(launchBaselinePack(bl->ctx, src, scales, topkIdx, T, bl->sendX, bl->sendScales, bl->sendMeta, stream));
  SY_CHECK_NCCL(ncclGroupStart());
  for (int peer = 0; peer < R; ++peer) {
    const uint64_t at = static_cast<uint64_t>(peer) * C;
    const uint64_t out = bl->sendRows[peer], in = bl->recvRows[peer];
    if (out > 0) {
      SY_CHECK_NCCL(ncclSend(bl->sendX + at * rowBytes, out * rowBytes, ncclUint8, peer, comm, stream));
      if (scaleBytes) SY_CHECK_NCCL(ncclSend(bl->sendScales + at * scaleBytes, out * scaleBytes, ncclUint8, peer, comm, stream));
      SY_CHECK_NCCL(ncclSend(bl->sendMeta + at * 16, out * 16, ncclUint8, peer, comm, stream));
    }
    if (in > 0) {
      SY_CHECK_NCCL(ncclRecv(bl->stageX + at * rowBytes, in * rowBytes, ncclUint8, peer, comm, stream));
      if (scaleBytes) SY_CHECK_NCCL(ncclRecv(bl->stageScales + at * scaleBytes, in * scaleBytes, ncclUint8, peer, comm, stream));
      SY_CHECK_NCCL(ncclRecv(bl->stageMeta + at * 16, in * 16, ncclUint8, peer, comm, stream));
    }
  }
  SY_CHECK_NCCL(ncclGroupEnd());
  CompactArgs a{};
  a.stageX = bl->stageX;
  a.stageScales = bl->stageScales;
  a.stageMeta = bl->stageMeta;
  a.outX = bl->out[0];
  a.outScales = scaleBytes ? bl->out[1] : nullptr;
  a.outMeta = bl->out[2];
  a.rowBytes = static_cast<uint32_t>(rowBytes);
  a.scaleBytes = static_cast<uint32_t>(scaleBytes);
  a.L = L;
  a.R = R;
  a.tables = bl->ctx.contig;
  SY_CHECK_CUDA(launchCompact(a, stream));
  bl->tokens = T;
}

void baselineCombine(sy_baseline* bl, const void* expertOut, const int32_t* topkIdx, const float* topkWeights, int T,
                     void* y, cudaStream_t stream) {
  SY_REQUIRE(bl->alive, "sy_baseline_combine: the baseline was destroyed");
  SY_REQUIRE(T == bl->tokens, "sy_baseline_combine: num_tokens " << T << " differs from the dispatch's " << bl->tokens);
  SY_CHECK_CUDA(cudaSetDevice(bl->nccl->device));
  const SyParams& p = bl->ctx.p;
  const int R = p.ranks();
  const uint64_t C = p.v[P_ROWS_PER_SOURCE];
  const uint64_t rowBytes = static_cast<uint64_t>(p.hidden()) * 2;
  ncclComm_t comm = commOf(bl);
  clearStaleError("sy_baseline_combine");
  SY_CHECK_CUDA(launchBaselineGather(bl->ctx, bl->out[2],
                                     static_cast<const uint8_t*>(expertOut), bl->backSend, stream));
  SY_CHECK_NCCL(ncclGroupStart());
  for (int peer = 0; peer < R; ++peer) {
    const uint64_t at = static_cast<uint64_t>(peer) * C * rowBytes;
    // Back to each source what it sent us; from each destination what we sent it.
    if (bl->recvRows[peer] > 0) {
      SY_CHECK_NCCL(ncclSend(bl->backSend + at, bl->recvRows[peer] * rowBytes, ncclUint8, peer, comm, stream));
    }
    if (bl->sendRows[peer] > 0) {
      SY_CHECK_NCCL(ncclRecv(bl->backRecv + at, bl->sendRows[peer] * rowBytes, ncclUint8, peer, comm, stream));
    }
  }
  SY_CHECK_NCCL(ncclGroupEnd());
  SY_CHECK_CUDA(launchBaselineReduce(bl->ctx, topkIdx, topkWeights, T, bl->backRecv, y, stream));
}

#else  // built without NCCL

namespace {
[[noreturn]] void noNccl(const char* call) {
  SY_THROW(SY_ERR_UNSUPPORTED, call << ": this build has no NCCL (CMake found no nccl.h; set NCCL_HOME)");
}
}  // namespace

void ncclUniqueIdBytes(uint8_t*) { noNccl("sy_nccl_get_unique_id"); }
sy_nccl* createNccl(const uint8_t*, int, int, int) { noNccl("sy_nccl_create"); }
void destroyNccl(sy_nccl* nc) { nc->alive = false; }
sy_baseline* createBaseline(sy_nccl*, const uint64_t*, size_t, int) { noNccl("sy_baseline_create"); }
void destroyBaseline(sy_baseline* bl) { bl->alive = false; }
void baselineDispatch(sy_baseline*, const void*, const float*, const int32_t*, int, cudaStream_t) {
  noNccl("sy_baseline_dispatch");
}
void baselineCombine(sy_baseline*, const void*, const int32_t*, const float*, int, void*, cudaStream_t) {
  noNccl("sy_baseline_combine");
}

#endif

}  // namespace sy
