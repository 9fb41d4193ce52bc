#include "endpoint.h"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "../kernels/launch.h"
#include "../kernels/signal.cuh"
#include "error.h"
#include "params_check.h"

namespace sy {

#define SY_NAME_OF(index, id, name) name,
const char* const kRegionNames[R_REGION_COUNT] = {SY_CONTRACT_REGIONS(SY_NAME_OF)};
#undef SY_NAME_OF

namespace {

// The words of stages and record faults in messages: switchyard_contract.h's labels.
#define SY_LABEL_CASE(value, id, label, meaning) \
  case value:                                    \
    return label;

const char* stageName(uint32_t stage) {
  switch (stage) {
    SY_CONTRACT_STAGES(SY_LABEL_CASE)
    default: return "dispatch recv";  // any other value reads as the first stage, as it always has
  }
}

const char* recordFault(uint32_t f) {
  switch (f) {
    SY_CONTRACT_RECORD_FAULTS(SY_LABEL_CASE)
    default: return "unknown fault";
  }
}

#undef SY_LABEL_CASE

void requireAlive(const sy_endpoint* ep, const char* call) {
  if (!ep->alive) SY_THROW(SY_ERR_STATE, call << ": the endpoint was destroyed");
  if (ep->bystander) {
    SY_THROW(SY_ERR_STATE, call << ": PE " << ep->rt->rank << " is outside this config's " << ep->ctx.p.ranks()
                                << " ranks (it only takes part in creating and destroying the endpoint)");
  }
  if (!ep->failed.empty()) {
    SY_THROW(SY_ERR_STATE, call << ": an earlier step failed (" << ep->failed
                                << "); destroy this endpoint and create a new one");
  }
}

void requireTokens(const sy_endpoint* ep, int T, const char* call) {
  SY_REQUIRE(T >= 0 && T <= ep->ctx.p.maxTokens(),
             call << ": num_tokens " << T << " is outside [0, maxTokensPerRank = " << ep->ctx.p.maxTokens() << "]");
}

/// Deep pointer checks run outside graph capture, unless SWITCHYARD_CUDA_POINTER_CHECKS=0.
bool deepChecks(const sy_endpoint* ep, bool capturing) { return ep->rt->pointerChecks && !capturing; }

}  // namespace

sy_endpoint* createEndpoint(sy_runtime* rt, const uint64_t* params, size_t count, uint64_t symmetricBytes,
                            uint64_t timeoutNs) {
  SY_REQUIRE(rt != nullptr && rt->alive, "sy_endpoint_create: the runtime is NULL or destroyed");
  SY_REQUIRE(timeoutNs > 0, "sy_endpoint_create: timeout_ns is 0; every receive would time out at once");
  SyParams p{};
  validateParams(params, count, symmetricBytes, "sy_endpoint_create", &p.localRegions);
  std::copy(params, params + kParamCount, p.v);
  SY_REQUIRE(p.ranks() <= rt->ranks, "sy_endpoint_create: config has " << p.ranks() << " ranks, the runtime " << rt->ranks);
  // Refused before the collective allocation, from facts every rank shares.
  checkSupported(p);
  // The put path's outbox, beside the heap in the same collective allocation: every PE asks for
  // the same size (the transport is the same on every rank, and a PE some peer cannot reach with
  // stores is in a world with another host, where no PE reaches every peer).
  const bool puts = rt->forcePuts || rt->directPeers != rt->ranks;
  const uint64_t heapBytes = (symmetricBytes + 255) / 256 * 256;
  const uint64_t outboxBytes = puts ? outboxBytesOf(p) : 0;
  const int R = p.ranks();
  auto* ep = new sy_endpoint();
  ep->rt = rt;
  ep->symmetricBytes = symmetricBytes;
  try {
    // Collective: every rank asks for the same size, then zeroes its heap before anyone writes.
    uint8_t* heap = static_cast<uint8_t*>(nvshmem_malloc(heapBytes + outboxBytes));
    if (heap == nullptr) {
      SY_THROW(SY_ERR_NVSHMEM, "nvshmem_malloc(" << heapBytes + outboxBytes
                                                 << ") failed: raise NVSHMEM_SYMMETRIC_SIZE or lower maxTokensPerRank");
    }
    ep->ctx.heap = heap;
    ep->outboxBytes = outboxBytes;
    // Config rank r is PE r; PEs past the config's ranks only take part in the collectives. A
    // peer's base is null where its heap is not mapped here (or the put transport is forced): the
    // kernels put to it (kernels/put.cuh). This PE always stores to itself.
    std::vector<uint8_t*> peers(R, nullptr);
    for (int pe = 0; pe < R; ++pe) {
      const bool forced = rt->forcePuts && pe != rt->rank;
      peers[pe] = forced ? nullptr : static_cast<uint8_t*>(nvshmem_ptr(heap, pe));
      if (peers[pe] == nullptr) ++ep->putPeers;
    }
    if (ep->putPeers > 0 && outboxBytes == 0) {
      SY_THROW(SY_ERR_UNSUPPORTED, "sy_endpoint_create: PE " << rt->rank << " cannot reach " << ep->putPeers
                                                             << " peer(s) with stores, yet every PE reached all "
                                                                "of theirs when the runtime was created");
    }
    ep->ctx.puts = ep->putPeers > 0;
    if (outboxBytes > 0) ep->ctx.out = outboxOf(p, heap + heapBytes);
    ep->bystander = rt->rank >= R;
    SY_CHECK_CUDA(cudaMalloc(&ep->dPeers, sizeof(uint8_t*) * R));
    SY_CHECK_CUDA(cudaMemcpy(ep->dPeers, peers.data(), sizeof(uint8_t*) * R, cudaMemcpyHostToDevice));
    ep->ctx.peers = ep->dPeers;
    SY_CHECK_CUDA(cudaMalloc(&ep->ctx.state, sizeof(SyState)));
    ep->deviceBytes = heapBytes + outboxBytes + sizeof(SyState) + sizeof(uint8_t*) * R;
    ep->ctx.p = p;
    // One wave of the stage kernels' grids, shared fairly by the PEs on this GPU: their kernels
    // wait for each other, so each PE's must fit beside the others' (the contiguous send's blocks
    // also wait for one another: its per-block counts are sized for a wave).
    int perSm = 0;
    forgetSmem();
    SY_CHECK_CUDA(stageOccupancy(&perSm));
    ep->blocksPerSm = std::max(1, perSm);
    ep->wave = std::max(1, rt->smCount * ep->blocksPerSm / std::max(1, rt->gpuShare));
    ep->ctx.maxBlocks = ep->wave;
    allocBuffers(ep);
    SY_CHECK_CUDA(cudaMemset(heap, 0, symmetricBytes));
    SY_CHECK_CUDA(cudaMemset(ep->ctx.state, 0, sizeof(SyState)));
    SY_CHECK_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    ep->ctx.rank = rt->rank;
    ep->ctx.kernelPerHalf = rt->kernelPerHalf;
    ep->ctx.timeoutNs = timeoutNs;
    ep->budget = std::max(1, std::min(defaultContiguousBlocks(rt->smCount, rt->contiguousBlocks), rt->smCount / std::max(1, rt->gpuShare)));
    ep->alive = true;
    ++rt->endpoints;
  } catch (...) {
    destroyEndpoint(ep);
    delete ep;
    throw;
  }
  return ep;
}

/// Makes this endpoint's running kernels leave: every wait loop polls the error word (waitWord), so
/// a non-zero code written from a stream of its own ends a receive (or the contiguous send's count
/// wait) still waiting for a peer, instead of letting them run to their
/// timeouts while destroy waits for the device.
void abortEndpoint(sy_endpoint* ep) {
  if (ep->ctx.state == nullptr) return;
  static const uint32_t kAborted = E_ABORTED;
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  ignoreCuda(cudaMemcpyAsync(&ep->ctx.state->error.code, &kAborted, sizeof(kAborted), cudaMemcpyHostToDevice, s));
  ignoreCuda(cudaStreamSynchronize(s));
  ignoreCuda(cudaStreamDestroy(s));
}

void destroyEndpoint(sy_endpoint* ep) {
  // Best effort: a failure here changes nothing for the caller, and must not be left for a later launch.
  if (ep->rt != nullptr) ignoreCuda(cudaSetDevice(ep->rt->device));
  abortEndpoint(ep);
  ignoreCuda(cudaDeviceSynchronize());
  if (ep->alive && ep->rt != nullptr) --ep->rt->endpoints;
  freeStats(ep);
  freeBuffers(ep);
  if (ep->ctx.heap != nullptr) nvshmem_free(ep->ctx.heap);
  ignoreCuda(cudaFree(ep->dPeers));
  ignoreCuda(cudaFree(ep->ctx.state));
  ep->ctx = SyCtx{};
  ep->dPeers = nullptr;
  ep->alive = false;
}

namespace {

/// Dispatch send's checks, before anything is enqueued; enters the phase.
void beginDispatchSend(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topkIdx,
                       const float* topkWeights, int T, cudaStream_t stream, const char* call) {
  requireAlive(ep, call);
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  const bool capturing = streamCapturing(stream);
  enterPhase(ep, kDispatchSend, capturing);
  requireTokens(ep, T, call);
  const SyParams& p = ep->ctx.p;
  const bool deep = deepChecks(ep, capturing);
  const uint64_t rows = static_cast<uint64_t>(T);
  if (T > 0) {
    const uint64_t xBytes = rows * p.hidden() * (p.inputFp8() ? 1 : 2);
    requireDevicePtr(ep, x, xBytes, p.quantize() ? 16 : 1, call, "x", deep);
    requireDevicePtr(ep, topkIdx, rows * p.topK() * 4, 4, call, "topk_idx", deep);
    if (!p.combineAtHome()) requireDevicePtr(ep, topkWeights, rows * p.topK() * 4, 4, call, "topk_weights", deep);
    if (p.inputFp8()) requireDevicePtr(ep, scales, rows * (p.hidden() / 128) * 4, 4, call, "scales (fp8 input)", deep);
  }
  SY_REQUIRE(p.inputFp8() || scales == nullptr, call << ": scales given but the input dtype is bf16");
  SY_REQUIRE(!p.combineAtHome() || topkWeights == nullptr,
             call << ": topk_weights given, but the config's combine_weights is home: the weights go to "
                     "sy_combine_recv; pass NULL here");
  clearStaleError(call);
}

void beginDispatchRecv(sy_endpoint* ep, cudaStream_t stream, const char* call) {
  requireAlive(ep, call);
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  enterPhase(ep, kDispatchRecv, streamCapturing(stream));
  clearStaleError(call);
}

}  // namespace

void dispatchSend(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topkIdx,
                  const float* topkWeights, int T, cudaStream_t stream) {
  beginDispatchSend(ep, x, scales, topkIdx, topkWeights, T, stream, "sy_dispatch_send");
  if (ep->ctx.p.contiguous()) {
    SY_CHECK_CUDA(launchDispatchSendContiguous(ep->ctx, x, scales, topkIdx, topkWeights, T, ep->budget, stream));
  } else {
    SY_CHECK_CUDA(launchDispatch(ep->ctx, x, scales, topkIdx, topkWeights, T, 1, ep->smallPieces, stream));
  }
  leavePhase(ep, kDispatchSend);
}

void dispatchRecv(sy_endpoint* ep, cudaStream_t stream) {
  beginDispatchRecv(ep, stream, "sy_dispatch_recv");
  const SyCtx& c = ep->ctx;
  if (c.p.contiguous()) SY_CHECK_CUDA(launchDispatchRecvContiguous(c, ep->budget, stream));
  else SY_CHECK_CUDA(launchDispatch(c, nullptr, nullptr, nullptr, nullptr, 0, 2, ep->smallPieces, stream));
  leavePhase(ep, kDispatchRecv);
}

void dispatch(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topkIdx, const float* topkWeights,
              int T, cudaStream_t stream) {
  const char* call = "sy_dispatch";
  beginDispatchSend(ep, x, scales, topkIdx, topkWeights, T, stream, call);
  leavePhase(ep, kDispatchSend);
  beginDispatchRecv(ep, stream, call);
  if (ep->ctx.p.contiguous()) {  // its send waits for every rank's counts: kernels of their own
    SY_CHECK_CUDA(launchDispatchSendContiguous(ep->ctx, x, scales, topkIdx, topkWeights, T, ep->budget, stream));
    SY_CHECK_CUDA(launchDispatchRecvContiguous(ep->ctx, ep->budget, stream));
  } else {
    SY_CHECK_CUDA(launchDispatch(ep->ctx, x, scales, topkIdx, topkWeights, T, 3, ep->smallPieces, stream));
  }
  leavePhase(ep, kDispatchRecv);
}

namespace {

void requireExact(const sy_endpoint* ep, const char* call) {
  if (ep->exactOutput) return;
  SY_THROW(SY_ERR_STATE, call << ": the endpoint's output is worst-case sized (dispatch recv already placed the rows "
                                 "in recvX); call sy_endpoint_set_output(ep, 1) between steps for exact-size output");
}

}  // namespace

uint64_t dispatchRecvRows(sy_endpoint* ep, cudaStream_t stream, sy_error_info* info) {
  const char* call = "sy_dispatch_recv_rows";
  requireAlive(ep, call);
  requireExact(ep, call);
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  enterPhase(ep, kRecvRows, streamCapturing(stream));
  check(ep, stream, info, call);  // waits for the counts; a timeout or protocol error throws here
  int32_t rows = 0;
  SY_CHECK_CUDA(cudaMemcpy(&rows, ep->ctx.t.offsets + ep->ctx.p.localExperts(), sizeof(rows),
                           cudaMemcpyDeviceToHost));
  ep->exactRows = static_cast<uint64_t>(rows);
  leavePhase(ep, kRecvRows);
  return ep->exactRows;
}

void dispatchRecvInto(sy_endpoint* ep, void* x, float* scales, cudaStream_t stream) {
  const char* call = "sy_dispatch_recv_into";
  requireAlive(ep, call);
  requireExact(ep, call);
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  const bool capturing = streamCapturing(stream);
  enterPhase(ep, kRecvInto, capturing);
  const SyParams& p = ep->ctx.p;
  const uint64_t rows = ep->exactRows;
  const bool fp8 = p.scalesPerRow() > 0;
  if (rows > 0) {
    const bool deep = deepChecks(ep, capturing);
    requireDevicePtr(ep, x, rows * p.rowBytes(), 16, call, "x", deep);
    if (fp8) requireDevicePtr(ep, scales, rows * p.scalesPerRow() * 4, 4, call, "scales (fp8 dispatch)", deep);
  }
  SY_REQUIRE(fp8 || scales == nullptr, call << ": scales given but the dispatch dtype is bf16 (pass NULL)");
  clearStaleError(call);
  // The step's rows are the front of the symmetric recvX / recvScales: one copy each.
  if (rows > 0) {
    SY_CHECK_CUDA(cudaMemcpyAsync(x, regionAddress(ep, R_RECV_X), rows * p.rowBytes(), cudaMemcpyDeviceToDevice,
                                  stream));
    if (fp8) {
      SY_CHECK_CUDA(cudaMemcpyAsync(scales, regionAddress(ep, R_RECV_SCALES), rows * p.scalesPerRow() * 4,
                                    cudaMemcpyDeviceToDevice, stream));
    }
  }
  leavePhase(ep, kRecvInto);
}

namespace {

void beginCombineSend(sy_endpoint* ep, const void* expertOut, cudaStream_t stream, const char* call) {
  requireAlive(ep, call);
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  const bool capturing = streamCapturing(stream);
  enterPhase(ep, kCombineSend, capturing);
  const SyParams& p = ep->ctx.p;
  const uint64_t rows = ep->exactOutput ? ep->exactRows : static_cast<uint64_t>(p.v[P_ROWS]);
  if (rows > 0) {
    requireDevicePtr(ep, expertOut, rows * p.hidden() * 2, 2, call, "expert_out", deepChecks(ep, capturing));
  }
  clearStaleError(call);
}

void beginCombineRecv(sy_endpoint* ep, const int32_t* topkIdx, const float* topkWeights, int T, void* y,
                      cudaStream_t stream, const char* call) {
  requireAlive(ep, call);
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));
  const bool capturing = streamCapturing(stream);
  enterPhase(ep, kCombineRecv, capturing);
  requireTokens(ep, T, call);
  const SyParams& p = ep->ctx.p;
  if (T > 0) {
    const bool deep = deepChecks(ep, capturing);
    const uint64_t slots = static_cast<uint64_t>(T) * p.topK();
    requireDevicePtr(ep, topkIdx, slots * 4, 4, call, "topk_idx", deep);
    // topk_weights: with weights at home the weights of the sum (required); else not read (they
    // travelled in the route records), NULL is fine.
    SY_REQUIRE(!p.combineAtHome() || topkWeights != nullptr,
               call << ": topk_weights is NULL, but the config's combine_weights is home: pass this rank's router "
                       "weights [num_tokens, top_k] fp32 here");
    if (topkWeights != nullptr) requireDevicePtr(ep, topkWeights, slots * 4, 4, call, "topk_weights", deep);
    requireDevicePtr(ep, y, static_cast<uint64_t>(T) * p.hidden() * 2, 2, call, "y", deep);
  }
  clearStaleError(call);
}

int budgetOf(const sy_endpoint* ep) { return ep->ctx.p.contiguous() ? ep->budget : 0; }

}  // namespace

void combineSend(sy_endpoint* ep, const void* expertOut, cudaStream_t stream) {
  beginCombineSend(ep, expertOut, stream, "sy_combine_send");
  SY_CHECK_CUDA(launchCombine(ep->ctx, expertOut, nullptr, nullptr, 0, nullptr, budgetOf(ep), 1, stream));
  leavePhase(ep, kCombineSend);
}

void combineRecv(sy_endpoint* ep, const int32_t* topkIdx, const float* topkWeights, int T, void* y,
                 cudaStream_t stream) {
  beginCombineRecv(ep, topkIdx, topkWeights, T, y, stream, "sy_combine_recv");
  const float* homeWeights = ep->ctx.p.combineAtHome() ? topkWeights : nullptr;
  SY_CHECK_CUDA(launchCombine(ep->ctx, nullptr, topkIdx, homeWeights, T, y, budgetOf(ep), 2, stream));
  leavePhase(ep, kCombineRecv);
}

void combine(sy_endpoint* ep, const void* expertOut, const int32_t* topkIdx, const float* topkWeights, int T, void* y,
             cudaStream_t stream) {
  const char* call = "sy_combine";
  beginCombineSend(ep, expertOut, stream, call);
  leavePhase(ep, kCombineSend);
  beginCombineRecv(ep, topkIdx, topkWeights, T, y, stream, call);
  const float* homeWeights = ep->ctx.p.combineAtHome() ? topkWeights : nullptr;
  SY_CHECK_CUDA(launchCombine(ep->ctx, expertOut, topkIdx, homeWeights, T, y, budgetOf(ep), 3, stream));
  leavePhase(ep, kCombineRecv);
}

void check(sy_endpoint* ep, cudaStream_t stream, sy_error_info* info, const char* call) {
  if (!ep->alive) SY_THROW(SY_ERR_STATE, "sy_endpoint_check: the endpoint was destroyed");
  SY_CHECK_CUDA(cudaSetDevice(ep->rt->device));  // may run on a worker thread
  SY_CHECK_CUDA(cudaStreamSynchronize(stream));
  SyErrorWord w{};
  SY_CHECK_CUDA(cudaMemcpy(&w, &ep->ctx.state->error, sizeof(w), cudaMemcpyDeviceToHost));
  sy_error_info out{w.code, w.stage, w.peer, w.region, w.detail0, w.detail1};
  if (info != nullptr) *info = out;
  if (w.code == E_NONE) {
    if (!ep->failed.empty()) SY_THROW(SY_ERR_STATE, "an earlier step failed (" << ep->failed << ")");
    return;
  }
  const int rank = ep->ctx.rank;
  const char* region = w.region < R_REGION_COUNT ? kRegionNames[w.region] : "?";
  std::ostringstream m;
  if (w.code == E_BAD_INPUT) m << call << ": ";  // an argument error names the call that reports it
  m << "rank " << rank << ", " << stageName(w.stage);
  if (w.code != E_BAD_INPUT) m << ", region " << region;
  m << ": ";
  int status = SY_ERR_PROTOCOL;
  switch (w.code) {
    case E_BAD_INPUT: {  // topk_check.cuh: peer = the entry's value, detail1 = slot | (earlier slot + 1) << 16
      status = SY_ERR_INVALID_ARGUMENT;
      const int32_t value = static_cast<int32_t>(w.peer);
      const uint32_t k = w.detail1 & 0xffffu, q = w.detail1 >> 16;
      if (q == 0) {
        m << "topk_idx[" << w.detail0 << "][" << k << "] = " << value << " is outside [-1, " << ep->ctx.p.experts()
          << ")";
      } else {
        m << "topk_idx[" << w.detail0 << "] names expert " << value << " twice (slots " << q - 1 << " and " << k
          << ")";
      }
      m << (w.stage == S_DISPATCH_SEND ? "; nothing was sent (the other ranks time out waiting for this one)"
                                       : "; no partial was read for it");
      m << ": fix the router's output, then destroy and recreate the endpoints";
      break;
    }
    case E_TIMEOUT:
      status = SY_ERR_TIMEOUT;
      m << "waited " << ep->ctx.timeoutNs / 1000000 << " ms for rank " << w.peer
        << ", which never arrived (last signal word 0x" << std::hex << w.detail0 << std::dec << ")";
      break;
    case E_COUNT_TOO_LARGE:
      m << "signal from rank " << w.peer << " counts " << w.detail0 << " rows, more than the " << w.detail1
        << " possible";
      break;
    case E_BAD_EPOCH:
      m << "signal from rank " << w.peer << " is stale: epoch " << w.detail0 << ", this step is epoch " << w.detail1;
      break;
    case E_COUNT_MISMATCH:
      if (w.stage == S_DISPATCH_RECV) {  // recv_tables.cuh's checkRowsNamed
        m << "rank " << w.peer << "'s route records name " << w.detail0 << " rows but its per-expert counts announce "
          << w.detail1 << " (rows announced and never written)";
        break;
      }
      if (w.peer != 0xffffffffu) {
        // core's combineRecv words it the same way
        m << "expert rank " << w.peer << " announced " << w.detail0 << " partials, " << w.detail1
          << " of this rank's tokens route to it";
        break;
      }
      m << "expert ranks announced " << w.detail0 << " partials, this rank's tokens need " << w.detail1;
      break;
    case E_BAD_RECORD:
      m << "route record " << w.detail0 << " from rank " << w.peer << ": " << recordFault(w.detail1);
      break;
    case E_ABORTED:
      m << "the endpoint was destroyed while a step ran";
      break;
    default:
      m << "unknown error code " << w.code;
  }
  ep->failed = m.str();
  throw Error(status, ep->failed);
}

}  // namespace sy
