// One rank's buffers for one config: the symmetric heap laid out by core's layout, the device
// state of the protocol, and the four phases.
#pragma once
#include <string>

#include "../kernels/params.cuh"
#include "runtime.h"
#include "switchyard_cuda.h"

constexpr uint32_t kEndpointMagic = 0x53594550;  // "SYEP"

struct sy_endpoint {
  uint32_t magic = kEndpointMagic;
  sy_runtime* rt = nullptr;
  sy::SyCtx ctx{};
  uint64_t symmetricBytes = 0;
  /// Bytes of the local allocation (core's local regions: masked recvX, recvScales, recvMeta;
  /// contiguous recvMeta).
  uint64_t localBytes = 0;
  /// Device memory this endpoint allocated in all (symmetric heap, local buffers, tables, scratch).
  uint64_t deviceBytes = 0;
  /// Contiguous layout: the SM budget of its kernels (sy_endpoint_set_blocks).
  int budget = 24;
  /// Masked layout: one wave of its grids (the SM count times the stage kernels' blocks an SM,
  /// over the PEs sharing the GPU), the default and the most of ctx.maxBlocks; and those blocks an SM.
  int wave = 1;
  int blocksPerSm = 1;
  /// Masked layout: the step's send piece size (launchDispatch: 512-byte pieces), so that under
  /// kernel_per_half its receive-only launch runs the same `dispatch` kernel as its send.
  bool smallPieces = false;
  uint8_t** dPeers = nullptr;
  /// Peers this PE reaches with NVSHMEM puts (kernels/put.cuh), and the outbox they take (bytes
  /// after the heap in its allocation; 0 when the world stores to every peer).
  int putPeers = 0;
  uint64_t outboxBytes = 0;
  /// One device allocation holding ctx.t and ctx.plan's arrays.
  void* scratch = nullptr;
  /// Set after a receive stage failed: later phases are refused with it (the step is lost).
  std::string failed;
  /// A PE past the config's ranks: it joins the collective allocation, runs no phase.
  bool bystander = false;
  bool alive = false;
  /// The next call of the step on the host (a Call); another is refused with SY_ERR_PHASE before
  /// anything is enqueued.
  int phase = 0;
  /// Contiguous exact-size output (sy_endpoint_set_output): the caller reads the step's rows
  /// (exactRows) and dispatch recv into copies them from the symmetric recvX into its buffers.
  bool exactOutput = false;
  uint64_t exactRows = 0;
  /// Cleared for good once a phase is enqueued under stream capture: the host cannot see graph
  /// replays, so from then on the order is the caller's to keep.
  bool phaseChecks = true;
  /// Per-peer counters (sy_endpoint_enable_stats): one device allocation ctx.stats points into.
  void* statsBuffer = nullptr;
  uint64_t statsBytes = 0;
};

namespace sy {

/// Region names in RegionIndex order (core's REGION_NAMES), for messages.
extern const char* const kRegionNames[R_REGION_COUNT];

sy_endpoint* createEndpoint(sy_runtime* rt, const uint64_t* params, size_t count, uint64_t symmetricBytes,
                            uint64_t timeoutNs);
/// Makes the endpoint's running kernels leave at once (their waits see an abort); destroy runs it
/// before waiting for calls in flight, so that a sy_endpoint_check blocked on the stream returns.
void abortEndpoint(sy_endpoint* ep);
void destroyEndpoint(sy_endpoint* ep);
void dispatchSend(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topkIdx,
                  const float* topkWeights, int T, cudaStream_t stream);
void dispatchRecv(sy_endpoint* ep, cudaStream_t stream);
void combineSend(sy_endpoint* ep, const void* expertOut, cudaStream_t stream);
void combineRecv(sy_endpoint* ep, const int32_t* topkIdx, const float* topkWeights, int T, void* y,
                 cudaStream_t stream);
/// A whole half in one launch (masked; contiguous: its two kernels): dispatch send and recv, combine
/// send and recv, with the same checks and phase order as the calls one by one.
void dispatch(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topkIdx, const float* topkWeights,
              int T, cudaStream_t stream);
void combine(sy_endpoint* ep, const void* expertOut, const int32_t* topkIdx, const float* topkWeights, int T, void* y,
             cudaStream_t stream);
/// Buffers besides the symmetric heap (endpoint_buffers.cc): the local regions, tables, scratch.
uint64_t localBytesOf(const SyParams& p);
/// Throws SY_ERR_UNSUPPORTED for configs the kernels cannot take (checked before allocating).
void checkSupported(const SyParams& p);
void allocBuffers(sy_endpoint* ep);
/// The put path's outbox (kernels/params.cuh SyOutbox): its bytes for a config, and its arrays at `base`.
uint64_t outboxBytesOf(const SyParams& p);
SyOutbox outboxOf(const SyParams& p, uint8_t* base);
void freeBuffers(sy_endpoint* ep);
void setBlocks(sy_endpoint* ep, int blocks);
/// The contiguous SM budget: SWITCHYARD_CONTIGUOUS_BLOCKS or 24, at most the SM count.
int defaultContiguousBlocks(int smCount, int configured);
/// Synchronises the stream; throws SY_ERR_TIMEOUT / SY_ERR_PROTOCOL with `info` filled on a recorded error.
void check(sy_endpoint* ep, cudaStream_t stream, sy_error_info* info, const char* call = "sy_endpoint_check");

/// The host calls of a step, in order; exact output puts kRecvRows and kRecvInto between dispatch
/// recv and combine send.
enum Call : int { kDispatchSend = 0, kDispatchRecv, kCombineSend, kCombineRecv, kRecvRows, kRecvInto };

/// Contiguous exact-size output: switches the endpoint's output mode between steps; the rows of a
/// step, then a copy of them into the caller's buffers.
void setOutput(sy_endpoint* ep, bool exact);
/// Synchronises `stream` as check() does (filling `info` on a recorded error), then the step's rows.
uint64_t dispatchRecvRows(sy_endpoint* ep, cudaStream_t stream, sy_error_info* info);
void dispatchRecvInto(sy_endpoint* ep, void* x, float* scales, cudaStream_t stream);
/// Address of a region in this rank's memory (symmetric heap or local allocation), or null when
/// the layout does not use it.
uint8_t* regionAddress(const sy_endpoint* ep, int region);

/// Phase order and pointers (endpoint_checks.cc).
/// Whether `stream` is being captured into a graph (a failed query counts as capturing).
bool streamCapturing(cudaStream_t stream);
/// Refuses (SY_ERR_PHASE) a call the endpoint's phase does not allow; a capture turns checks off for good.
void enterPhase(sy_endpoint* ep, int call, bool capturing);
void leavePhase(sy_endpoint* ep, int call);
/// Refuses (SY_ERR_INVALID_ARGUMENT) a NULL or misaligned pointer and, when `deep`, one that is not
/// memory of this endpoint's GPU (host memory, another GPU's) or holds fewer than `bytes` bytes.
void requireDevicePtr(const sy_endpoint* ep, const void* p, uint64_t bytes, unsigned align, const char* call,
                      const char* name, bool deep);

/// Per-peer counters (endpoint_stats.cc).
void enableStats(sy_endpoint* ep);
void freeStats(sy_endpoint* ep);
/// Synchronises `stream`, then fills each non-NULL array of `ranks` entries (see sy_endpoint_stats).
void readStats(sy_endpoint* ep, cudaStream_t stream, size_t ranks, uint32_t* dispatchSent, uint32_t* dispatchReceived,
               uint32_t* combineSent, uint32_t* combineReceived, uint64_t* dispatchWaitNs, uint64_t* combineWaitNs);

}  // namespace sy
