// The parameter block the kernels read, and the context every kernel receives.
//
// Offsets are never derived here: `SyParams` is core's `layoutParams(layout)` (layout/params.ts),
// packed as u64 in `PARAM_NAMES` order by the TypeScript side. `sy_param_names()` returns the
// order compiled in below; the TypeScript loader refuses an addon whose order differs from core's.
#pragma once
#include <cstdint>

#include "align.cuh"
#include "switchyard_contract.h"

namespace sy {

// The enumerators below are built from switchyard_contract.h's lists, generated from core's
// contract: P_<SCALAR>, R_<REGION>, E_<CODE>, F_<FAULT>, S_<STAGE> (values and order are core's).
#define SY_PARAMS_ENUMERATOR(index, id, name) P_##id = index,
#define SY_REGION_ENUMERATOR(index, id, name) R_##id = index,
#define SY_CODE_ENUMERATOR(value, id, label, meaning) E_##id = value,
#define SY_FAULT_ENUMERATOR(value, id, label, meaning) F_##id = value,
#define SY_STAGE_ENUMERATOR(value, id, label, meaning) S_##id = value,

/// Scalar fields, in core's SCALAR_PARAMS order (protocol version 2).
enum ParamIndex : int {
  SY_CONTRACT_SCALAR_PARAMS(SY_PARAMS_ENUMERATOR)
  P_SCALAR_COUNT,
  P_MAX_TOKENS = P_MAX_TOKENS_PER_RANK,  ///< short names the sources use
  P_TOPK = P_TOP_K
};

/// Regions, in core's REGION_NAMES order; region i has its offset at P_SCALAR_COUNT + 2i, bytes after it.
/// Offsets are from the start of the region's heap: symmetric, or the endpoint's local allocation
/// (SyParams::localRegions, from the layout: recvMeta, and recvX / recvScales in the masked layout).
enum RegionIndex : int { SY_CONTRACT_REGIONS(SY_REGION_ENUMERATOR) R_REGION_COUNT };

constexpr int kParamCount = P_SCALAR_COUNT + 2 * R_REGION_COUNT;
static_assert(kParamCount == SY_PARAM_COUNT, "switchyard_contract.h's SY_PARAM_COUNT must match its lists");

/// The names in the order above, comma-separated; compared with core's PARAM_NAMES at load.
constexpr const char* kParamNames = SY_CONTRACT_PARAM_NAMES;

/// Largest topK the kernels take: a token's slots are one warp's lanes.
constexpr int kMaxTopK = 32;

static_assert(R_REGION_COUNT <= 32, "SyParams::localRegions has a bit a region");

/// Core's parameter block, passed to every kernel by value (320 bytes of kernel parameters), and
/// which heap each region is in.
struct SyParams {
  uint64_t v[kParamCount];
  /// Bit r: region r lives in the endpoint's local allocation, not the symmetric heap. The C
  /// layout's heap of each region (core's region table), set with the block (validateParamBlock).
  uint32_t localRegions;

  __host__ __device__ int ranks() const { return static_cast<int>(v[P_RANKS]); }
  __host__ __device__ int localExperts() const { return static_cast<int>(v[P_LOCAL_EXPERTS]); }
  __host__ __device__ int experts() const { return static_cast<int>(v[P_EXPERTS]); }
  __host__ __device__ int maxTokens() const { return static_cast<int>(v[P_MAX_TOKENS]); }
  __host__ __device__ int hidden() const { return static_cast<int>(v[P_HIDDEN]); }
  __host__ __device__ int topK() const { return static_cast<int>(v[P_TOPK]); }
  __host__ __device__ int scalesPerRow() const { return static_cast<int>(v[P_SCALES_PER_ROW]); }
  __host__ __device__ int elemBytes() const { return static_cast<int>(v[P_DISPATCH_ELEM_BYTES]); }
  __host__ __device__ int dpSize() const { return static_cast<int>(v[P_DP_SIZE]); }
  __host__ __device__ int alignment() const { return static_cast<int>(v[P_EXPERT_ALIGNMENT]); }
  /// J = min(K, L): the most route entries one token has on one rank.
  __host__ __device__ int slotsPerRank() const { return static_cast<int>(v[P_SLOTS_PER_RANK]); }
  /// W = 2 + 4 J: i32 words of one route record.
  __host__ __device__ int routeWords() const { return static_cast<int>(v[P_ROUTE_WORDS]); }
  __host__ __device__ bool contiguous() const { return v[P_LAYOUT_CONTIGUOUS] != 0; }
  __host__ __device__ bool quantize() const { return v[P_QUANTIZE] != 0; }
  __host__ __device__ bool inputFp8() const { return v[P_INPUT_FP8] != 0; }
  /// fp8 block scales as amax / 448 (sy_scale_format amax); pow2 and ue8m0 store the same 2^s.
  __host__ __device__ bool amaxScales() const { return v[P_SCALE_FORMAT] == SY_SCALE_AMAX; }
  /// Router weights applied at home (combineX holds a row per (token, slot)).
  __host__ __device__ bool combineAtHome() const { return v[P_COMBINE_AT_HOME] != 0; }
  /// Output rows (recvX rows): masked L * R * M, contiguous N.
  __host__ __device__ uint64_t rows() const { return v[P_ROWS]; }
  __host__ __device__ uint64_t offset(int region) const { return v[P_SCALAR_COUNT + 2 * region]; }
  __host__ __device__ uint64_t bytes(int region) const { return v[P_SCALAR_COUNT + 2 * region + 1]; }
  /// Bytes of one dispatched row (dispatch dtype).
  __host__ __device__ uint64_t rowBytes() const { return static_cast<uint64_t>(hidden()) * elemBytes(); }
  /// Whether `region` lives in the endpoint's local allocation rather than the symmetric heap.
  __host__ __device__ bool isLocalRegion(int region) const { return ((localRegions >> region) & 1u) != 0; }
};

/// The error a receive kernel records (first one wins) before it exits. Read by the host after the stream.
struct SyErrorWord {
  uint32_t code;    ///< ErrorCode, 0 = none
  uint32_t stage;   ///< Stage
  uint32_t peer;    ///< the rank waited for, or whose signal broke the protocol
  uint32_t region;  ///< RegionIndex of the signal
  uint32_t detail0; ///< timeout: last word seen; count errors: the count; epoch errors: the epoch seen
  uint32_t detail1; ///< count errors: the maximum / expected; epoch errors: this step's epoch
};

/// What a stage recorded (switchyard_contract.h's sy_error_code: the meaning of each there). E_BAD_RECORD:
/// detail0 = record j, detail1 = the RecordFault. E_BAD_INPUT (topk_check.cuh): peer = the entry's
/// value, detail0 = token, detail1 = slot | (earlier slot + 1) << 16; nothing was sent.
enum ErrorCode : uint32_t { E_NONE = 0, SY_CONTRACT_ERROR_CODES(SY_CODE_ENUMERATOR) };

/// What was wrong with a route record (E_BAD_RECORD's detail1; switchyard_contract.h's sy_record_fault).
enum RecordFault : uint32_t { SY_CONTRACT_RECORD_FAULTS(SY_FAULT_ENUMERATOR) };

/// The stage whose wait failed. Contiguous dispatch send waits for every rank's counts.
enum Stage : uint32_t { SY_CONTRACT_STAGES(SY_STAGE_ENUMERATOR) };

#undef SY_PARAMS_ENUMERATOR
#undef SY_REGION_ENUMERATOR
#undef SY_CODE_ENUMERATOR
#undef SY_FAULT_ENUMERATOR
#undef SY_STAGE_ENUMERATOR

/// Completion counters of the stage kernels (SyState::done): each block adds one after its rows
/// and the last one writes the stage's signals, then resets the counter (graph replays reuse it).
enum DoneCounter : int {
  DONE_SEND = 0,
  DONE_PLAN = 1,
  DONE_COMBINE_SEND = 2,
  DONE_COMBINE_RECV = 3,
  DONE_FAN_OUT = 4,  ///< the contiguous receive's blocks done claiming (its last resets the claims)
  DONE_COUNT = 5
};

/// Device-resident state of one endpoint: the step counter (epoch source), the error word and the
/// completion counters. Zeroed at endpoint creation.
struct SyState {
  uint32_t step;               ///< completed steps; epoch = step % 2047 + 1. Advanced by combine recv.
  uint32_t done[DONE_COUNT];   ///< completion counters (DoneCounter)
  uint32_t stepHigh;           ///< step's wraps around 2^32 (with step: the 64-bit step of stepMark)
  uint32_t combineClaims;      ///< combine send's items claimed past its first round (its last block resets it)
  uint32_t recvClaims;         ///< the contiguous receive's items claimed past its first round (reset as DONE_FAN_OUT completes)
  SyErrorWord error;
};

/// Per-peer counters of the latest step (sy_endpoint_enable_stats): device arrays the stage kernels
/// stamp with plain stores, each entry written once per step. All null when stats are off, and
/// then no kernel touches them.
struct SyStats {
  uint32_t* dispatchSent;    ///< [R] route records this rank sent to each destination, by dispatch send
  uint32_t* dispatchRecords; ///< [R] route records each source sent this rank, by dispatch recv
  uint32_t* combineSent;     ///< [R] partials written to each home rank, by combine send
  uint32_t* combineReceived; ///< [R] partials each expert rank announced, by combine recv
  uint64_t* dispatchWaitNs;  ///< [R] ns from dispatch recv's start to the arrival of each source's signal
  uint64_t* combineWaitNs;   ///< [R] ns from combine recv's start to the arrival of each expert rank's signal
};

/// The receive side's tables of a step, written by dispatch recv (block 0) from the signals and
/// read by combine send (and the host: counts, offsets). Device arrays of the endpoint.
struct SyTables {
  int32_t* counts;       ///< [L, R] rows each source announced for each local expert (core's sourceCounts)
  int32_t* pairStart;    ///< [L, R] first output row of (local expert e, source s)
  int32_t* offsets;      ///< [L + 1] first row of each expert block; [L] = rows in use (contiguous, padded)
  int32_t* expertCount;  ///< [L] rows of each local expert
  int32_t* records;      ///< [R] route records from each source this step
  int32_t* named;        ///< [R] entries the step's records from each source named, compared by combine recv's check (zero between steps)
  uint64_t* taken;       ///< [rows] the step (stepMark) whose entry last named each output row
};

/// The send side's scratch of a step (dispatch send's plan, kernels/plan.cuh).
struct SyPlan {
  int32_t* entryIndex;   ///< [M, K] index of (t, k) among the source's rows for topkIdx[t][k]
  int32_t* recordIndex;  ///< [M, K] record j of t on the rank of slot k (valid at each rank's first slot)
  int32_t* totals;       ///< [E + R] rows per expert, then records per destination (the last chunk's block)
  // The contiguous send's counts by block (plan.cuh's planChunkByBlocks), for grids of up to `blocks`:
  int32_t* blockCounts;  ///< [blocks, E + R] each block's chunk: rows per expert, then records per destination
  uint64_t* blockBad;    ///< [blocks] the chunk's first bad entry (topk_check.cuh's key), or none
  uint64_t* blockMarks;  ///< [blocks] stepMark once the block's counts and first bad entry are written
  int blocks;            ///< the grids' largest: one wave of the stage kernels on this rank's share of the GPU
};

/// The put path's staging (docs/design.md "Put path"): a send stage's rows, scales, records and
/// count words for a peer that plain stores cannot reach (`peers[d]` null: another host, or every
/// other PE under the put transport) are written here first, then put into the peer's heap with
/// NVSHMEM (put.cuh). Symmetric (an RDMA source must be), allocated with the heap; null pointers
/// when no peer takes puts. The dispatch arrays and combine's rows share the bytes: a rank's send
/// stages never overlap, and each completes its puts before it ends.
struct SyOutbox {
  uint8_t* rows;      ///< [R(dst), M, rowBytes] dispatch payload of record (d, j)
  float* scales;      ///< [R(dst), M, S] its fp32 scales (fp8 dispatch)
  int32_t* routes;    ///< [R(dst), M, W] route records
  uint32_t* counts;   ///< [R(dst), L (masked) or E (contiguous)] count words
  int32_t* destRow;   ///< [R(dst), M] contiguous: record (d, j)'s row in d's recvX
  uint16_t* combine;  ///< [R * M records, J (weights at home) or 1, hidden] combine send's rows
};

/// Everything a kernel needs, passed by value.
struct SyCtx {
  SyParams p;
  uint8_t* heap;              ///< this rank's symmetric heap (layout offsets of symmetric regions apply)
  uint8_t* local;             ///< this rank's local allocation (offsets of local regions apply)
  uint8_t* const* peers;      ///< device array [ranks]: peer heap bases from nvshmem_ptr; null: puts (put.cuh)
  SyOutbox out;               ///< the put path's staging (null pointers without put peers)
  bool puts;                  ///< some peer of this rank takes puts
  SyState* state;             ///< device state
  SyTables t;                 ///< receive tables
  SyPlan plan;                ///< send scratch
  int rank;
  int maxBlocks;              ///< grid limit of the masked kernels (SMs / PEs sharing this GPU)
  bool kernelPerHalf;         ///< stage calls launch their half's kernel function (dispatch.cu), not their stage's
  uint64_t timeoutNs;
  SyStats stats;              ///< per-peer counters, null pointers when off
};

/// Address of region `r` in this rank's memory (symmetric heap or local allocation).
__host__ __device__ inline uint8_t* regionPtr(const SyCtx& c, int r) {
  return (c.p.isLocalRegion(r) ? c.local : c.heap) + c.p.offset(r);
}

}  // namespace sy
