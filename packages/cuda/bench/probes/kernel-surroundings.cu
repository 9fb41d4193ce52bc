// Probe: fences on NVSHMEM's symmetric heap vs cudaMalloc, a 768-byte by-value parameter, shared-memory carveouts; needs NVSHMEM through libswitchyard_cuda (build/ of this package), build line below (record: results/2026-11-24-masked-latency).
// Second probe: what in a stage kernel's surroundings costs microseconds on one GPU. Same method as
// kernel-floor.cu (graphs of 200 launches, 1 block x 512 threads, median replay / 200), on memory of
// NVSHMEM's symmetric heap (an endpoint's dispatchSignal, through libswitchyard_cuda) against
// cudaMalloc memory, a large by-value parameter like SyCtx, and dynamic shared memory that changes
// the SM's carveout between consecutive kernels.
//   nvcc -O3 -arch=sm_90 kernel-surroundings.cu -I../../include -L../../build -lswitchyard_cuda -Xlinker -rpath=../../build -o kernel-surroundings
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "switchyard_layout.h"

#define CK(x)                                                                        \
  do {                                                                               \
    long long e_ = static_cast<long long>(x);                                        \
    if (e_ != 0) {                                                                   \
      std::printf("%s failed: %lld %s\n", #x, e_, sy_last_error(nullptr));          \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

struct Big {
  unsigned long long v[96];  // 768 bytes, about SyCtx's size
};

template <bool sys>
__global__ void fenceRelease(unsigned* p) {
  p[64 + threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    if (sys) __threadfence_system();
    else __threadfence();
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(1u) : "memory");
  }
}

__global__ void acquireLoad(unsigned* p) {
  if (threadIdx.x == 0) {
    unsigned v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    if (v == 0xdeadbeefu) p[1] = v;
  }
}

__global__ void bigParam(Big b, unsigned* p) {
  if (b.v[threadIdx.x % 96] == 0xdeadbeefull) p[0] = 1;
}

__global__ void withSmem(unsigned* p) {
  extern __shared__ unsigned s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (s[(threadIdx.x + 1) % 512] == 0xdeadbeefu) p[0] = 1;
}

__global__ void noSmem(unsigned* p) {
  if (p == nullptr) __trap();
}

template <typename Launch>
int measure(const char* name, cudaStream_t s, int perReplay, Launch launch) {
  const int n = 200 / perReplay;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < n; ++i) launch();
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < 23; ++r) {
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 3) t.push_back(ms * 1000.0f / (n * perReplay));
  }
  std::sort(t.begin(), t.end());
  std::printf("| %-62s | %6.2f |\n", name, t[t.size() / 2]);
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  return 0;
}

int main() {
  sy_config config;
  sy_config_init(&config);
  config.ranks = 1;
  config.experts = 8;
  config.top_k = 2;
  config.hidden = 256;
  config.max_tokens_per_rank = 8;
  static sy_layout layout;
  layout.struct_size = sizeof layout;
  CK(sy_layout_compute(&config, &layout));
  unsigned char id[SY_UNIQUE_ID_BYTES];
  sy_runtime* rt = nullptr;
  sy_endpoint* ep = nullptr;
  CK(sy_get_unique_id(id));
  CK(sy_runtime_create(id, 0, 1, 0, &rt));
  CK(sy_endpoint_create(rt, layout.params, layout.param_count, layout.symmetric_bytes, 1000000000ull, &ep));
  void* heap = nullptr;
  uint64_t heapBytes = 0;
  CK(sy_endpoint_region(ep, SY_REGION_DISPATCH_X, &heap, &heapBytes));
  unsigned* dev = nullptr;
  CK(cudaMalloc(&dev, 1 << 16));
  CK(cudaMemset(dev, 0, 1 << 16));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int smem = 10 * 1024 + 256;
  CK(cudaFuncSetAttribute(withSmem, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024));
  unsigned* h = static_cast<unsigned*>(heap);
  Big big{};
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s; symmetric heap region %llu bytes\n\n| kernel (1 block x 512), back to back in a graph | us each |\n|---|---:|\n",
              prop.name, static_cast<unsigned long long>(heapBytes));
  int rc = 0;
  rc |= measure("stores, system fence, release: cudaMalloc memory", s, 1, [&] { fenceRelease<true><<<1, 512, 0, s>>>(dev); });
  rc |= measure("stores, system fence, release: NVSHMEM symmetric heap", s, 1, [&] { fenceRelease<true><<<1, 512, 0, s>>>(h); });
  rc |= measure("stores, gpu fence, release: NVSHMEM symmetric heap", s, 1, [&] { fenceRelease<false><<<1, 512, 0, s>>>(h); });
  rc |= measure("one acquire load: NVSHMEM symmetric heap", s, 1, [&] { acquireLoad<<<1, 512, 0, s>>>(h); });
  rc |= measure("empty, 768-byte by-value parameter", s, 1, [&] { bigParam<<<1, 512, 0, s>>>(big, dev); });
  rc |= measure("10 KB dynamic shared memory, every kernel", s, 1, [&] { withSmem<<<1, 512, smem, s>>>(dev); });
  rc |= measure("10 KB shared, then none, alternating (per kernel)", s, 2, [&] {
    withSmem<<<1, 512, smem, s>>>(dev);
    noSmem<<<1, 512, 0, s>>>(dev);
  });
  CK(cudaFree(dev));
  CK(sy_endpoint_destroy(ep));
  CK(sy_runtime_destroy(rt));
  return rc;
}
