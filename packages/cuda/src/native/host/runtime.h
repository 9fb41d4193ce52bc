// One process's NVSHMEM runtime on one GPU (created collectively by unique id).
#pragma once
#include <string>

#include "switchyard_cuda.h"

constexpr uint32_t kRuntimeMagic = 0x53595254;  // "SYRT"

struct sy_runtime {
  uint32_t magic = kRuntimeMagic;
  int rank = 0;
  int ranks = 0;
  int device = 0;
  int nodeRanks = 0;
  int smCount = 0;
  int directPeers = 0;     // PEs reachable with plain stores (nvshmem_ptr != NULL), self included
  bool forcePuts = false;  // sy_runtime_options.transport SY_TRANSPORT_PUT: every other PE through puts
  /// PEs of this world on this rank's GPU, itself included (several ranks on one GPU: the stage
  /// kernels' grids shrink so that every PE's kernels fit at once, since they wait for each other).
  int gpuShare = 1;
  /// Phases check that their pointers are memory of this GPU, long enough (cudaPointerGetAttributes,
  /// cuMemGetAddressRange); sy_runtime_options.pointer_checks = 0 turns that off (NULL and alignment stay checked).
  bool pointerChecks = true;
  /// Contiguous layout: default grid of its copy kernels (sy_runtime_options.contiguous_blocks; 0 = 24).
  int contiguousBlocks = 0;
  /// Stage calls launch their half's kernel function (sy_runtime_options.kernel_per_half).
  bool kernelPerHalf = false;
  int endpoints = 0;       // live endpoints: the runtime refuses to be destroyed before them
  bool alive = false;
};

namespace sy {

void getUniqueId(uint8_t* out);
sy_runtime* createRuntime(const uint8_t* uniqueId, int rank, int ranks, int device, const sy_runtime_options& options);
void destroyRuntime(sy_runtime* rt);
void barrier(sy_runtime* rt, cudaStream_t stream);

}  // namespace sy
