// The peer-write bench (peer_write.h). The runtime is the product's: this library reads its rank,
// world and SM count through the C ABI, and NVSHMEM (started by the product) gives the symmetric
// buffer and the peers' addresses.
#include "peer_write.h"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <vector>

#include "../../../src/native/host/error.h"

namespace sy {
namespace {

__global__ void peerWriteKernel(uint4* const* dsts, int peers, const uint4* src, size_t vecs) {
  // Block b writes to peer b % peers, every block of a peer strides over the whole buffer.
  const int peer = blockIdx.x % peers;
  const int blocksPerPeer = gridDim.x / peers;
  const int b = blockIdx.x / peers;
  uint4* dst = dsts[peer];
  for (size_t i = static_cast<size_t>(b) * blockDim.x + threadIdx.x; i < vecs;
       i += static_cast<size_t>(blocksPerPeer) * blockDim.x) {
    dst[i] = src[i];
  }
}

}  // namespace

double benchPeerWrite(sy_runtime* runtime, size_t bytes, int iters) {
  sy_runtime_info info{};
  const int got = sy_runtime_info_get(runtime, &info);
  if (got != SY_OK) SY_THROW(got, "sy_bench_peer_write: rt: " << sy_last_error(runtime));
  SY_REQUIRE(bytes >= 16 && bytes % 16 == 0 && iters >= 1, "sy_bench_peer_write: bytes must be a multiple of 16");
  SY_CHECK_CUDA(cudaSetDevice(info.device));
  uint8_t* heap = static_cast<uint8_t*>(nvshmem_malloc(bytes * info.ranks));
  if (heap == nullptr) SY_THROW(SY_ERR_NVSHMEM, "nvshmem_malloc(" << bytes * info.ranks << ") failed");
  std::vector<uint4*> dsts;
  for (int pe = 0; pe < info.ranks; ++pe) {
    if (pe == info.rank) continue;
    void* p = nvshmem_ptr(heap + static_cast<size_t>(info.rank) * bytes, pe);
    if (p != nullptr) dsts.push_back(static_cast<uint4*>(p));
  }
  double gbps = 0;
  void* src = nullptr;
  uint4** dDsts = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t a = nullptr, b = nullptr;
  // On both paths: the events and stream too, so a failed benchmark leaks nothing.
  auto release = [&] {
    ignoreCuda(cudaFree(src));
    ignoreCuda(cudaFree(dDsts));
    if (a != nullptr) ignoreCuda(cudaEventDestroy(a));
    if (b != nullptr) ignoreCuda(cudaEventDestroy(b));
    if (stream != nullptr) ignoreCuda(cudaStreamDestroy(stream));
    nvshmem_free(heap);
  };
  try {
    SY_CHECK_CUDA(cudaMalloc(&src, bytes));
    SY_CHECK_CUDA(cudaMemset(src, 1, bytes));
    SY_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    SY_CHECK_CUDA(cudaEventCreate(&a));
    SY_CHECK_CUDA(cudaEventCreate(&b));
    if (!dsts.empty()) {
      SY_CHECK_CUDA(cudaMalloc(&dDsts, dsts.size() * sizeof(uint4*)));
      SY_CHECK_CUDA(cudaMemcpy(dDsts, dsts.data(), dsts.size() * sizeof(uint4*), cudaMemcpyHostToDevice));
      const int peers = static_cast<int>(dsts.size());
      const int blocks = ((info.sm_count * 2) / peers) * peers;
      const size_t vecs = bytes / 16;
      clearStaleError("sy_bench_peer_write");
      nvshmemx_barrier_all_on_stream(stream);
      peerWriteKernel<<<blocks, 512, 0, stream>>>(dDsts, peers, static_cast<const uint4*>(src), vecs);  // warm-up
      nvshmemx_barrier_all_on_stream(stream);
      SY_CHECK_CUDA(cudaEventRecord(a, stream));
      for (int i = 0; i < iters; ++i) {
        peerWriteKernel<<<blocks, 512, 0, stream>>>(dDsts, peers, static_cast<const uint4*>(src), vecs);
      }
      SY_CHECK_CUDA(cudaEventRecord(b, stream));
      SY_CHECK_CUDA(cudaGetLastError());
      SY_CHECK_CUDA(cudaStreamSynchronize(stream));
      float ms = 0;
      SY_CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
      gbps = static_cast<double>(bytes) * peers * iters / (ms * 1e-3) / 1e9;
    }
    nvshmemx_barrier_all_on_stream(stream);
    SY_CHECK_CUDA(cudaStreamSynchronize(stream));
  } catch (...) {
    release();
    throw;
  }
  release();
  return gbps;
}

}  // namespace sy
