// Probe: what a one-block kernel costs before its work (graph launches, gpu/system fences, dependent loads, barriers); no NVSHMEM. Build: nvcc -O3 -std=c++17 -arch=sm_90 kernel-floor.cu -o kernel-floor && ./kernel-floor (record: results/2026-11-24-masked-latency).
// What a one-block stage kernel costs before it does any work, on one GPU: launch and kernel
// boundaries in a CUDA graph, system- against GPU-scope fences, dependent global loads, barriers.
// Each probe: a graph of 200 launches of one kernel (1 block x 512 threads) on one stream, replayed
// 20 times after 3 warm-ups; the figure is the median replay time / 200 (what a kernel costs back
// to back, launch included), and for comparison the median of 200 single launches between events.
#include "check.cuh"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void empty(unsigned* p) {
  if (p == nullptr) __trap();
}

// 16 warps write 1 KB each, then thread 0 fences at `sys` or gpu scope and releases a flag.
template <bool sys>
__global__ void writeFenceRelease(unsigned* p) {
  p[1024 + threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    if (sys) __threadfence_system();
    else __threadfence();
    if (sys) asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(1u) : "memory");
    else asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(1u) : "memory");
  }
}

// Thread 0 follows `n` dependent pointers through a 64 MiB ring (each load misses L2).
__global__ void chase(unsigned* ring, int n) {
  if (threadIdx.x != 0) return;
  unsigned i = 0;
  for (int k = 0; k < n; ++k) i = __ldcg(ring + i);
  if (i == 0xffffffffu) ring[0] = i;
}

// `n` rounds of: every thread loads one word, barrier (a block walking a table in steps).
__global__ void barriers(unsigned* p, int n) {
  unsigned acc = 0;
  for (int k = 0; k < n; ++k) {
    acc += __ldcg(p + ((k * 512 + threadIdx.x) & 0xffff));
    __syncthreads();
  }
  if (acc == 0xffffffffu) p[0] = acc;
}

template <typename Launch>
int measure(const char* name, cudaStream_t s, Launch launch) {
  const int n = 200;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < n; ++i) launch();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> replay, single;
  for (int r = 0; r < 23; ++r) {
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 3) replay.push_back(ms * 1000.0f / n);
  }
  for (int r = 0; r < n; ++r) {
    CK(cudaEventRecord(a, s));
    launch();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    single.push_back(ms * 1000.0f);
  }
  std::sort(replay.begin(), replay.end());
  std::sort(single.begin(), single.end());
  std::printf("| %-44s | %8.2f | %8.2f |\n", name, replay[replay.size() / 2], single[single.size() / 2]);
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  return 0;
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned *p, *ring;
  CK(cudaMalloc(&p, 1 << 20));
  const size_t words = (64u << 20) / 4;
  CK(cudaMalloc(&ring, words * 4));
  std::vector<unsigned> h(words);
  for (size_t i = 0; i < words; ++i) h[i] = static_cast<unsigned>((i + 4099 * 17) % words);  // strides of 272 KiB
  CK(cudaMemcpy(ring, h.data(), words * 4, cudaMemcpyHostToDevice));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s\n\n| kernel (1 block x 512) | us per kernel, graph of 200 | us, one launch between events |\n|---|---:|---:|\n",
              prop.name);
  int rc = 0;
  rc |= measure("empty", s, [&] { empty<<<1, 512, 0, s>>>(p); });
  rc |= measure("1 KB a warp, gpu-scope fence + release", s, [&] { writeFenceRelease<false><<<1, 512, 0, s>>>(p); });
  rc |= measure("1 KB a warp, system-scope fence + release", s, [&] { writeFenceRelease<true><<<1, 512, 0, s>>>(p); });
  rc |= measure("10 dependent loads missing L2 (thread 0)", s, [&] { chase<<<1, 512, 0, s>>>(ring, 10); });
  rc |= measure("20 dependent loads missing L2 (thread 0)", s, [&] { chase<<<1, 512, 0, s>>>(ring, 20); });
  rc |= measure("20 rounds of load + __syncthreads", s, [&] { barriers<<<1, 512, 0, s>>>(p, 20); });
  return rc;
}
