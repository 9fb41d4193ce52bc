#include "runtime.h"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstring>
#include <vector>

#include "error.h"

namespace sy {

void getUniqueId(uint8_t* out) {
  SY_REQUIRE(out != nullptr, "sy_get_unique_id: out is NULL");
  static_assert(sizeof(nvshmemx_uniqueid_t) == SY_UNIQUE_ID_BYTES, "NVSHMEM unique id size changed");
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  const int rc = nvshmemx_get_uniqueid(&id);
  if (rc != 0) SY_THROW(SY_ERR_NVSHMEM, "nvshmemx_get_uniqueid failed with " << rc);
  std::memcpy(out, &id, sizeof(id));
}

namespace {

int countDirectPeers(const sy_runtime* rt) {
  if (rt->forcePuts) return 1;  // itself only
  // nvshmem_ptr on a symmetric probe: non-null means plain loads/stores reach that PE.
  void* probe = nvshmem_malloc(256);
  if (probe == nullptr) SY_THROW(SY_ERR_NVSHMEM, "nvshmem_malloc(256) failed");
  int n = 0;
  for (int pe = 0; pe < rt->ranks; ++pe) n += nvshmem_ptr(probe, pe) != nullptr ? 1 : 0;
  nvshmem_free(probe);
  return n;
}

/// PEs whose GPU has this PE's UUID (self included): each PE writes a hash of its GPU's UUID into
/// slot [rank] of every store-reachable PE's symmetric array, then a barrier. PEs that cannot be
/// reached with stores are on other GPUs anyway.
int countGpuShare(const sy_runtime* rt) {
  cudaDeviceProp prop{};
  SY_CHECK_CUDA(cudaGetDeviceProperties(&prop, rt->device));
  uint64_t hash = 1469598103934665603ull;
  for (int i = 0; i < 16; ++i) hash = (hash ^ static_cast<uint8_t>(prop.uuid.bytes[i])) * 1099511628211ull;
  hash |= 1;  // never 0 (0 = not written)
  auto* ids = static_cast<uint64_t*>(nvshmem_malloc(sizeof(uint64_t) * rt->ranks));
  if (ids == nullptr) SY_THROW(SY_ERR_NVSHMEM, "nvshmem_malloc(" << 8 * rt->ranks << ") failed");
  int share = 1;
  try {
    SY_CHECK_CUDA(cudaMemset(ids, 0, sizeof(uint64_t) * rt->ranks));
    SY_CHECK_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    for (int pe = 0; pe < rt->ranks; ++pe) {
      auto* peer = static_cast<uint64_t*>(nvshmem_ptr(ids, pe));
      if (peer != nullptr) SY_CHECK_CUDA(cudaMemcpy(peer + rt->rank, &hash, sizeof(hash), cudaMemcpyHostToDevice));
    }
    SY_CHECK_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    std::vector<uint64_t> all(rt->ranks);
    SY_CHECK_CUDA(cudaMemcpy(all.data(), ids, sizeof(uint64_t) * rt->ranks, cudaMemcpyDeviceToHost));
    share = 0;
    for (uint64_t h : all) share += h == hash ? 1 : 0;
    if (share < 1) share = 1;
  } catch (...) {
    nvshmem_free(ids);
    throw;
  }
  nvshmem_free(ids);
  return share;
}

}  // namespace

sy_runtime* createRuntime(const uint8_t* uniqueId, int rank, int ranks, int device, const sy_runtime_options& options) {
  SY_REQUIRE(uniqueId != nullptr, "sy_runtime_create: unique_id is NULL");
  SY_REQUIRE(ranks >= 1 && rank >= 0 && rank < ranks,
             "sy_runtime_create: rank " << rank << " is outside [0, " << ranks << ")");
  int devices = 0;
  SY_CHECK_CUDA(cudaGetDeviceCount(&devices));
  SY_REQUIRE(device >= 0 && device < devices,
             "sy_runtime_create: device " << device << " is outside the " << devices << " visible GPUs");
  SY_CHECK_CUDA(cudaSetDevice(device));
  SY_CHECK_CUDA(cudaFree(nullptr));  // create the primary context before NVSHMEM looks for it
  nvshmemx_uniqueid_t id;
  std::memcpy(&id, uniqueId, sizeof(id));
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  int rc = nvshmemx_set_attr_uniqueid_args(rank, ranks, &id, &attr);
  if (rc != 0) SY_THROW(SY_ERR_NVSHMEM, "nvshmemx_set_attr_uniqueid_args failed with " << rc);
  rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
  if (rc != 0) SY_THROW(SY_ERR_NVSHMEM, "nvshmemx_init_attr failed with " << rc);
  if (nvshmem_my_pe() != rank || nvshmem_n_pes() != ranks) {
    SY_THROW(SY_ERR_NVSHMEM, "NVSHMEM made PE " << nvshmem_my_pe() << " of " << nvshmem_n_pes() << ", asked for rank "
                                                << rank << " of " << ranks);
  }
  auto* rt = new sy_runtime();
  rt->rank = rank;
  rt->ranks = ranks;
  rt->device = device;
  rt->nodeRanks = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE);
  SY_CHECK_CUDA(cudaDeviceGetAttribute(&rt->smCount, cudaDevAttrMultiProcessorCount, device));
  rt->forcePuts = options.transport == SY_TRANSPORT_PUT;
  rt->pointerChecks = options.pointer_checks != 0;
  rt->contiguousBlocks = options.contiguous_blocks;
  rt->kernelPerHalf = options.kernel_per_half != 0;
  rt->alive = true;
  rt->directPeers = countDirectPeers(rt);
  rt->gpuShare = countGpuShare(rt);
  return rt;
}

void destroyRuntime(sy_runtime* rt) {
  if (rt->endpoints > 0) {
    SY_THROW(SY_ERR_STATE, "sy_runtime_destroy: " << rt->endpoints
                                                  << " endpoint(s) of this runtime are alive; destroy them first");
  }
  if (rt->alive) {
    nvshmem_finalize();
    rt->alive = false;
  }
}

void barrier(sy_runtime* rt, cudaStream_t stream) {
  if (!rt->alive) SY_THROW(SY_ERR_STATE, "sy_barrier: the runtime was destroyed");
  clearStaleError("sy_barrier");
  nvshmemx_barrier_all_on_stream(stream);
  SY_CHECK_CUDA(cudaGetLastError());
}

}  // namespace sy
