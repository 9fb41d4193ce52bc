// One process's NVSHMEM runtime on one GPU (created collectively by unique id).
#pragma once
#include <string>

#include "switchyard_cuda.h"

constexpr uint32_t kRuntimeMagic = 0x53595254;  // "SYRT"

struct sy_runtime {
  uint32_t magic = kRuntimeMagic;
  std::string lastError;
  int rank = 0;
  int ranks = 0;
  int device = 0;
  int nodeRanks = 0;
  int smCount = 0;
  int directPeers = 0;     // PEs reachable with plain stores (nvshmem_ptr != NULL), self included
  bool forcePuts = false;  // SWITCHYARD_TRANSPORT=put: refused (version 2 has no put path)
  /// PEs of this world on this rank's GPU, itself included (several ranks on one GPU: the stage
  /// kernels' grids shrink so that every PE's kernels fit at once, since they wait for each other).
  int gpuShare = 1;
  /// Phases check that their pointers are memory of this GPU, long enough (cudaPointerGetAttributes,
  /// cuMemGetAddressRange); SWITCHYARD_CUDA_POINTER_CHECKS=0 turns that off (NULL and alignment stay checked).
  bool pointerChecks = true;
  int endpoints = 0;       // live endpoints: the runtime refuses to be destroyed before them
  bool alive = false;
};

namespace sy {

void getUniqueId(uint8_t* out);
sy_runtime* createRuntime(const uint8_t* uniqueId, int rank, int ranks, int device);
void destroyRuntime(sy_runtime* rt);
void barrier(sy_runtime* rt, cudaStream_t stream);
double benchPeerWrite(sy_runtime* rt, size_t bytes, int iters);

}  // namespace sy
