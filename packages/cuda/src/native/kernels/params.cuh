// The parameter block the kernels read, and the context every kernel receives.
//
// Offsets are never derived here: `SyParams` is core's `layoutParams(layout)` (layout/params.ts),
// packed as u64 in `PARAM_NAMES` order by the TypeScript side. `sy_param_names()` returns the
// order compiled in below; the TypeScript loader refuses an addon whose order differs from core's.
#pragma once
#include <cstdint>

#include "contiguous.cuh"

namespace sy {

/// Scalar fields, in core's SCALAR_PARAMS order.
enum ParamIndex : int {
  P_RANKS = 0,
  P_LOCAL_EXPERTS,
  P_MAX_TOKENS,
  P_HIDDEN,
  P_TOPK,
  P_SCALES_PER_ROW,
  P_DISPATCH_ELEM_BYTES,
  P_DP_SIZE,
  P_EXPERT_ALIGNMENT,
  P_ROWS_PER_SOURCE,
  P_ROWS,
  P_LAYOUT_CONTIGUOUS,
  P_QUANTIZE,
  P_INPUT_FP8,
  P_STAGING_TOKENS,
  P_SCALAR_COUNT
};

/// Regions, in core's REGION_NAMES order; region i has its offset at P_SCALAR_COUNT + 2i, bytes after it.
enum RegionIndex : int {
  R_DISPATCH_SIGNAL = 0,
  R_DISPATCH_X,
  R_DISPATCH_SCALES,
  R_DISPATCH_META,
  R_COUNT_SIGNAL,
  R_COMBINE_SIGNAL,
  R_COMBINE_X,
  R_RECV_X,
  R_RECV_SCALES,
  R_RECV_META,
  R_REGION_COUNT
};

constexpr int kParamCount = P_SCALAR_COUNT + 2 * R_REGION_COUNT;

/// The names in the order above, comma-separated; compared with core's PARAM_NAMES at load.
constexpr const char* kParamNames =
    "ranks,localExperts,maxTokensPerRank,hidden,topK,scalesPerRow,dispatchElemBytes,dpSize,"
    "expertAlignment,rowsPerSource,rows,layoutContiguous,quantize,inputFp8,stagingTokens,"
    "dispatchSignal.offset,dispatchSignal.bytes,dispatchX.offset,dispatchX.bytes,"
    "dispatchScales.offset,dispatchScales.bytes,dispatchMeta.offset,dispatchMeta.bytes,"
    "countSignal.offset,countSignal.bytes,combineSignal.offset,combineSignal.bytes,"
    "combineX.offset,combineX.bytes,recvX.offset,recvX.bytes,recvScales.offset,recvScales.bytes,"
    "recvMeta.offset,recvMeta.bytes";

/// Core's parameter block, passed to every kernel by value (280 bytes of kernel parameters).
struct SyParams {
  uint64_t v[kParamCount];

  __host__ __device__ int ranks() const { return static_cast<int>(v[P_RANKS]); }
  __host__ __device__ int localExperts() const { return static_cast<int>(v[P_LOCAL_EXPERTS]); }
  __host__ __device__ int maxTokens() const { return static_cast<int>(v[P_MAX_TOKENS]); }
  __host__ __device__ int hidden() const { return static_cast<int>(v[P_HIDDEN]); }
  __host__ __device__ int topK() const { return static_cast<int>(v[P_TOPK]); }
  __host__ __device__ int scalesPerRow() const { return static_cast<int>(v[P_SCALES_PER_ROW]); }
  __host__ __device__ int elemBytes() const { return static_cast<int>(v[P_DISPATCH_ELEM_BYTES]); }
  __host__ __device__ int dpSize() const { return static_cast<int>(v[P_DP_SIZE]); }
  __host__ __device__ bool quantize() const { return v[P_QUANTIZE] != 0; }
  __host__ __device__ bool inputFp8() const { return v[P_INPUT_FP8] != 0; }
  /// Contiguous bounded staging: tokens per round Q (0 = the staging holds a whole step).
  __host__ __device__ int stagingTokens() const { return static_cast<int>(v[P_STAGING_TOKENS]); }
  /// Rounds per step (1 without bounded staging).
  __host__ __device__ int stagingRounds() const {
    const int q = stagingTokens();
    return q > 0 ? (maxTokens() + q - 1) / q : 1;
  }
  /// Rows one source stages on one rank per round: Cq = Q * min(K, L).
  __host__ __device__ uint64_t roundRows() const {
    const int k = topK() < localExperts() ? topK() : localExperts();
    return static_cast<uint64_t>(stagingTokens()) * k;
  }
  __host__ __device__ uint64_t offset(int region) const { return v[P_SCALAR_COUNT + 2 * region]; }
  __host__ __device__ uint64_t bytes(int region) const { return v[P_SCALAR_COUNT + 2 * region + 1]; }
  /// Bytes of one dispatched row (dispatch dtype).
  __host__ __device__ uint64_t rowBytes() const { return static_cast<uint64_t>(hidden()) * elemBytes(); }
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

enum ErrorCode : uint32_t {
  E_NONE = 0,
  E_TIMEOUT = 1,        ///< a peer's signal did not arrive in time
  E_COUNT_TOO_LARGE = 2,///< a signal announced more rows than the region holds
  E_BAD_EPOCH = 3,      ///< a signal carried an epoch that is neither this step's nor the previous one
  E_COUNT_MISMATCH = 4, ///< combine: rows announced by expert ranks != slots used by this rank's tokens
  E_ABORTED = 5,        ///< written by the host when the endpoint is destroyed: every wait leaves at once
};

enum Stage : uint32_t { S_DISPATCH_RECV = 1, S_COMBINE_RECV = 2 };

/// Device-resident state of one endpoint: the step counter (epoch source), the error word and the
/// completion counters used to elect the block that writes signals. Zeroed at endpoint creation.
struct SyState {
  uint32_t step;           ///< completed steps; epoch = step % 2047 + 1. Advanced by combine recv.
  uint32_t combineSendDone;///< blocks of combine send that finished their rows
  uint32_t combineRecvDone;///< blocks of combine recv that finished
  uint32_t pad;
  SyErrorWord error;
};

/// Per-peer counters of the latest step (sy_endpoint_enable_stats): device arrays the stage kernels
/// stamp with plain stores, each entry written once per step. All null when stats are off, and
/// then no kernel touches them.
struct SyStats {
  uint32_t* dispatchSent;    ///< [R, L] rows this rank wrote to (destination, local expert), by dispatch send
  uint32_t* combineSent;     ///< [R] expert-output rows written to each home rank, by combine send
  uint32_t* combineReceived; ///< [R] rows each expert rank announced, by combine recv
  uint64_t* dispatchWaitNs;  ///< [L, R] ns from dispatch recv's start to the arrival of signal (e, s)
  uint64_t* combineWaitNs;   ///< [R] ns from combine recv's start to the arrival of each expert rank's signal
};

/// Everything a kernel needs, passed by value.
struct SyCtx {
  SyParams p;
  uint8_t* heap;              ///< this rank's symmetric heap (layout offsets apply)
  uint8_t* const* peers;      ///< device array [ranks]: peer heap bases from nvshmem_ptr, null = use puts
  uint8_t* staging;           ///< symmetric staging for the put path (null when every peer is direct)
  SyState* state;             ///< device state
  uint32_t* regionDone;       ///< [ranks * localExperts] split counters of dispatch send
  int32_t* counts;            ///< [localExperts * ranks] rows received per (expert, source), by dispatch recv
  uint8_t* quantX;            ///< [M, hidden] fp8: this step's tokens quantised once (bf16 -> fp8 dispatch only)
  float* quantScales;         ///< [M, hidden / 128] their block scales
  int rank;
  int splits;                 ///< blocks per (dest, expert) region in dispatch send
  uint64_t timeoutNs;
  SyContig contig;            ///< contiguous layout only (zero for masked): route and receive tables
  SyStats stats;              ///< per-peer counters, null pointers when off
};

}  // namespace sy
