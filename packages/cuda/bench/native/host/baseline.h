// The NCCL baseline of `switchyard bench`: dispatch and combine the way one would without a
// special library, in the same process and on the same stream as the NVSHMEM path, so both are
// timed the same way. Per step: the per-(rank, expert) counts go all-to-all through NCCL, the host
// waits for them (the host synchronisation), then grouped ncclSend / ncclRecv move the rows with
// those splits; combine sends the expert outputs back the same way and sums them with the router's
// weights. Built against NCCL when SY_WITH_NCCL is 1 (CMake found nccl.h), else every
// call fails with SY_ERR_UNSUPPORTED.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../kernels/context.cuh"
#include "switchyard_bench.h"

constexpr uint32_t kNcclMagic = 0x53594e43;      // "SYNC"
constexpr uint32_t kBaselineMagic = 0x5359424c;  // "SYBL"

/// One process's NCCL communicator (created collectively from rank 0's ncclUniqueId).
struct sy_nccl {
  uint32_t magic = kNcclMagic;
  void* comm = nullptr;  // ncclComm_t
  int rank = 0;
  int ranks = 0;
  int device = 0;
  int version = 0;
  bool alive = false;
};

/// One rank's baseline buffers for one config (sizes from the contiguous layout's parameters).
struct sy_baseline {
  uint32_t magic = kBaselineMagic;
  sy_nccl* nccl = nullptr;
  /// Parameters, quantisation scratch, route scratch and receive tables (ctx.contig), counts.
  sy::BaselineCtx ctx{};
  ///  sendX / sendScales / sendMeta   Shape: [R, C, ...]  rows for each destination, (expert, token) order
  ///  stageX / stageScales / stageMeta Shape: [R, C, ...] rows received from each source, same order
  ///  backSend Shape: [R, C, hidden] bf16: expert outputs for each source; backRecv: returned per destination
  uint8_t* sendX = nullptr;
  uint8_t* sendScales = nullptr;
  uint8_t* sendMeta = nullptr;
  uint8_t* stageX = nullptr;
  uint8_t* stageScales = nullptr;
  uint8_t* stageMeta = nullptr;
  uint8_t* backSend = nullptr;
  uint8_t* backRecv = nullptr;
  ///  out[R_RECV_X - R_RECV_X ..]: recvX [N, hidden], recvScales [N, S], recvMeta [N, 4] (local, core's sizes)
  uint8_t* out[3] = {nullptr, nullptr, nullptr};
  int32_t* countsIn = nullptr;   ///< [R, L] device: rows each source sends each local expert
  int32_t* tables = nullptr;     ///< device: counts [L*R], offsets [L+1], expertCount [L], pairStart, stageStart
  int32_t* hostIn = nullptr;     ///< pinned: countsIn [R*L] then staged [R]
  int32_t* hostTables = nullptr; ///< pinned mirror of `tables`
  std::vector<int> sendRows;     ///< rows to each destination, this step
  std::vector<int> recvRows;     ///< rows from each source, this step
  uint64_t deviceBytes = 0;
  int tokens = -1;               ///< T of the last dispatch (combine needs the same)
  bool alive = false;
};

namespace sy {

void ncclUniqueIdBytes(uint8_t* out);
sy_nccl* createNccl(const uint8_t* uniqueId, int rank, int ranks, int device);
void destroyNccl(sy_nccl* nc);
sy_baseline* createBaseline(sy_nccl* nc, const uint64_t* params, size_t count, int smCount);
void destroyBaseline(sy_baseline* bl);
/// Count exchange, host synchronisation, pack, grouped send / receive, compaction. Blocks the host.
void baselineDispatch(sy_baseline* bl, const void* x, const float* scales, const int32_t* topkIdx, int T,
                      cudaStream_t stream);
/// Expert outputs [N, hidden] bf16 (row-aligned with the compact output) back home; y [T, hidden] bf16.
void baselineCombine(sy_baseline* bl, const void* expertOut, const int32_t* topkIdx, const float* topkWeights, int T,
                     void* y, cudaStream_t stream);

}  // namespace sy
