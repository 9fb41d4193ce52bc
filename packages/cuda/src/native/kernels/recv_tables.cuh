// Dispatch receive's first step (both layouts): wait for every source's dispatchSignal (its
// records; the counts were released before it), read and check the counts, and build the tables
// that place each route-record entry: the row of entry (e, index) from source s is
// pairStart[e][s] + index, with
//   masked:     pairStart[e][s] = e * R * M + sum_{s' < s} count[s'][e]
//   contiguous: pairStart[e][s] = offsets[e] + sum_{s' < s} count[s'][e],
//               offsets[e] = sum_{e' < e} alignUp(sum_s count[s][e'], A).
//
///  dispatchSignal Shape: [R(src)]       u32 (epoch, records + 1)
///  countSignal    Shape: masked [R(src), L] at [s][e]; contiguous [R(src), E] at [s][rank * L + e]
//
// Every block builds the tables in shared memory itself (no grid-wide step); the block passed as
// block 0 also writes them to ctx.t for combine send and the host, and stamps the stats (the lean
// masked receive, dispatch_recv.cuh: one block builds them for all, beside the placing blocks).
// After an error the counts and records are zero, so a block that placed from its tables places
// nothing, and combine send moves nothing.
#pragma once
#include <cstdint>

#include "params.cuh"
#include "signal.cuh"
#include "stage.cuh"

namespace sy {

/// Shared tables of a receiving block (pointers into dynamic shared memory).
struct RecvTables {
  int* count;     ///< [L * R] at e * R + s
  int* start;     ///< [L * R] pairStart
  int* offsets;   ///< [L + 1]
  int* records;   ///< [R]
  int* recStart;  ///< [R + 1] prefix of records: the step's records from s are [recStart[s], recStart[s + 1])
  int* scratch;   ///< [33] for blockExclusiveScan
  int* fromSource;  ///< [R] rows each source announced (all its experts here)
  int* named;       ///< [R] entries this block's good records from each source named (addNamed; the lean
                    ///< receive's placing warps count into SyTables::named themselves)
};

__host__ __device__ inline int recvTablesSmemBytes(int L, int R) {
  return 4 * (2 * L * R + (L + 1) + R + (R + 1) + 33 + 2 * R);
}

__device__ inline RecvTables carveRecvTables(int* smem, int L, int R) {
  RecvTables t;
  t.count = smem;
  t.start = t.count + L * R;
  t.offsets = t.start + L * R;
  t.records = t.offsets + L + 1;
  t.recStart = t.records + R;
  t.scratch = t.recStart + R + 1;
  t.fromSource = t.scratch + 33;
  t.named = t.fromSource + R;
  return t;
}

/// Source s's records this step: its dispatchSignal, acquired (a bounded wait, stage dispatch recv),
/// or -1 once the step has failed (an error recorded before the wait included: waitWord reads it
/// beside its first poll).
__device__ inline int waitRecords(const SyCtx& c, uint32_t epoch, int s) {
  const uint32_t* done = reinterpret_cast<const uint32_t*>(c.heap + c.p.offset(R_DISPATCH_SIGNAL));
  return waitSignal(done + s, epoch, static_cast<uint32_t>(c.p.maxTokens()), c.state, c.timeoutNs, S_DISPATCH_RECV,
                    static_cast<uint32_t>(s), R_DISPATCH_SIGNAL);
}

/// The rows count word `w` from source s announces, checked as every receive checks it (this step's
/// epoch, at most M rows); a bad word records its error, naming s, and gives -1.
__device__ inline int checkedCount(const SyCtx& c, uint32_t w, uint32_t epoch, int s) {
  const uint32_t M = static_cast<uint32_t>(c.p.maxTokens());
  if (w == 0 || signalEpoch(w) != epoch) {
    recordError(c.state, E_BAD_EPOCH, S_DISPATCH_RECV, static_cast<uint32_t>(s), R_COUNT_SIGNAL, signalEpoch(w), epoch);
    return -1;
  }
  if (signalCount(w) > M) {
    recordError(c.state, E_COUNT_TOO_LARGE, S_DISPATCH_RECV, static_cast<uint32_t>(s), R_COUNT_SIGNAL, signalCount(w), M);
    return -1;
  }
  return static_cast<int>(signalCount(w));
}

/// Block-collective. Returns false (in every thread) when a wait or a signal failed.
/// `block`: this block's index in the stage (block 0 stamps the tables), default blockIdx.x.
__device__ inline bool buildRecvTables(const SyCtx& c, uint32_t epoch, const RecvTables& t, int block = -1) {
  const SyParams& p = c.p;
  const int R = p.ranks(), L = p.localExperts(), M = p.maxTokens(), E = p.experts();
  const bool contiguous = p.contiguous();
  const bool stamp = (block < 0 ? static_cast<int>(blockIdx.x) : block) == 0;
  const uint32_t* counts = reinterpret_cast<const uint32_t*>(c.heap + p.offset(R_COUNT_SIGNAL));
  const uint64_t t0 = globalTimerNs();
  // 1. Every source's dispatchSignal (acquire: its records, rows and counts were released before it).
  bool waitFailed = false;
  for (int s = threadIdx.x; s < R; s += blockDim.x) {
    t.fromSource[s] = 0;
    t.named[s] = 0;
    const int n = waitRecords(c, epoch, s);
    waitFailed |= n < 0;
    t.records[s] = n < 0 ? 0 : n;
    if (stamp && c.stats.dispatchWaitNs != nullptr) {
      c.stats.dispatchWaitNs[s] = globalTimerNs() - t0;
      c.stats.dispatchRecords[s] = n < 0 ? 0u : static_cast<uint32_t>(n);
    }
  }
  // 2. The counts, already here: plain loads, checked (this step's epoch, at most M rows). Skipped
  // when a wait failed (an error recorded before the step included); an error another block records
  // meanwhile is caught below, before anything is published.
  const bool waited = !__syncthreads_or(waitFailed);
  for (int i = threadIdx.x; i < L * R; i += blockDim.x) {
    const int s = i / L, e = i % L;
    const uint64_t at = contiguous ? static_cast<uint64_t>(s) * E + c.rank * L + e : static_cast<uint64_t>(s) * L + e;
    const int n = waited ? max(checkedCount(c, ldRelaxedSys(counts + at), epoch, s), 0) : 0;
    t.count[e * R + s] = n;
    if (n > 0) atomicAdd(&t.fromSource[s], n);
  }
  __syncthreads();
  // A source's rows here are at most M * J (J = min(K, L) entries of each of its tokens), which
  // also keeps the contiguous blocks' padded total within the layout's N rows: checked before
  // anything is placed, naming the source.
  const uint32_t perSource = static_cast<uint32_t>(M) * static_cast<uint32_t>(p.slotsPerRank());
  for (int s = threadIdx.x; s < R && waited; s += blockDim.x) {
    const uint32_t rows = static_cast<uint32_t>(t.fromSource[s]);
    if (rows > perSource) {
      recordError(c.state, E_COUNT_TOO_LARGE, S_DISPATCH_RECV, static_cast<uint32_t>(s), R_COUNT_SIGNAL, rows,
                  perSource);
    }
  }
  const bool failed = __syncthreads_or(hasError(c.state));
  if (failed) {
    for (int i = threadIdx.x; i < L * R; i += blockDim.x) t.count[i] = 0;
    for (int s = threadIdx.x; s < R; s += blockDim.x) t.records[s] = 0;
  }
  __syncthreads();
  // 3. Block offsets (masked: fixed; contiguous: padded prefix sums) and each (e, s)'s first row.
  for (int e = threadIdx.x; e < L; e += blockDim.x) {
    int rows = 0;
    for (int s = 0; s < R; ++s) rows += t.count[e * R + s];
    t.offsets[e] = contiguous ? alignUpInt(rows, p.alignment()) : R * M;
  }
  for (int s = threadIdx.x; s < R; s += blockDim.x) t.recStart[s] = t.records[s];
  __syncthreads();
  // Masked blocks are fixed (e * R * M): no scan.
  const int used = contiguous ? blockExclusiveScan(t.offsets, L, t.scratch) : L * R * M;
  if (!contiguous) {
    for (int e = threadIdx.x; e < L; e += blockDim.x) t.offsets[e] = e * R * M;
  }
  const int records = blockExclusiveScan(t.recStart, R, t.scratch);
  if (threadIdx.x == 0) {
    t.offsets[L] = used;
    t.recStart[R] = records;
  }
  for (int e = threadIdx.x; e < L; e += blockDim.x) {
    int row = t.offsets[e];
    for (int s = 0; s < R; ++s) {
      t.start[e * R + s] = row;
      row += t.count[e * R + s];
    }
  }
  __syncthreads();
  if (stamp) {
    for (int i = threadIdx.x; i < L * R; i += blockDim.x) {
      c.t.counts[i] = t.count[i];
      c.t.pairStart[i] = t.start[i];
    }
    for (int e = threadIdx.x; e <= L; e += blockDim.x) c.t.offsets[e] = t.offsets[e];
    for (int e = threadIdx.x; e < L; e += blockDim.x) {
      int rows = 0;
      for (int s = 0; s < R; ++s) rows += t.count[e * R + s];
      c.t.expertCount[e] = rows;
    }
    for (int s = threadIdx.x; s < R; s += blockDim.x) c.t.records[s] = t.records[s];
  }
  return !failed;
}

/// Block-collective, at the end of dispatch recv: the entries this block's records named, per
/// source (each record's placing warp added its n to `named`), into SyTables::named; combine recv's
/// check compares the step's totals with the counts (rows announced but never written). The lean
/// receive's placing warps add to SyTables::named themselves.
__device__ inline void addNamed(const SyCtx& c, const RecvTables& t) {
  __syncthreads();
  for (int s = threadIdx.x; s < c.p.ranks(); s += blockDim.x) {
    if (t.named[s] != 0) atomicAdd(&c.t.named[s], t.named[s]);
  }
}

/// Source of flattened record q (< recStart[R]) by binary search over recStart [R + 1].
__device__ inline int sourceOf(const int* recStart, int R, int q) {
  int lo = 0, hi = R - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (recStart[mid] <= q) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

}  // namespace sy
