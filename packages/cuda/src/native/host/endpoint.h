// One rank's buffers for one config: the symmetric heap laid out by core's layout, the device
// state of the protocol, and the four phases.
#pragma once
#include <string>

#include "../kernels/params.cuh"
#include "runtime.h"
#include "switchyard_cuda.h"

struct sy_endpoint {
  uint32_t magic = 0x53594550;  // "SYEP"
  std::string lastError;
  sy_runtime* rt = nullptr;
  sy::SyCtx ctx{};
  uint64_t symmetricBytes = 0;
  uint64_t stagingBytes = 0;
  /// Contiguous layout: bytes of the local buffers (recvX, recvScales, recvMeta); 0 for masked.
  uint64_t localBytes = 0;
  /// Device memory this endpoint allocated in all (symmetric heap, staging, local buffers, scratch).
  uint64_t deviceBytes = 0;
  int combineBlocks = 1;
  uint8_t** dPeers = nullptr;
  /// Set after a receive stage failed: later phases are refused with it (the step is lost).
  std::string failed;
  /// A PE past the config's ranks: it joins the collective allocation, runs no phase.
  bool bystander = false;
  bool alive = false;
};

namespace sy {

sy_endpoint* createEndpoint(sy_runtime* rt, const uint64_t* params, size_t count, uint64_t symmetricBytes,
                            uint64_t timeoutNs);
void destroyEndpoint(sy_endpoint* ep);
void dispatchSend(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topkIdx, int T,
                  cudaStream_t stream);
void dispatchRecv(sy_endpoint* ep, cudaStream_t stream);
void combineSend(sy_endpoint* ep, const void* expertOut, cudaStream_t stream);
void combineRecv(sy_endpoint* ep, const int32_t* topkIdx, const float* topkWeights, int T, void* y,
                 cudaStream_t stream);
/// Contiguous layout (endpoint_contiguous.cc): local buffers, route scratch, receive tables.
uint64_t localBytesOf(const SyParams& p);
/// Throws SY_ERR_UNSUPPORTED for contiguous configs the kernels cannot take (checked before allocating).
void checkContiguous(const SyParams& p);
void allocContiguous(sy_endpoint* ep);
void freeContiguous(sy_endpoint* ep);
void setContiguousBlocks(sy_endpoint* ep, int blocks);
/// Synchronises the stream; throws SY_ERR_TIMEOUT / SY_ERR_PROTOCOL with `info` filled on a recorded error.
void check(sy_endpoint* ep, cudaStream_t stream, sy_error_info* info);

}  // namespace sy
