// Probe: the floor of the bench's timing method. The bench captures a step as one CUDA graph of four
// stage kernels with an event before the first and after each (events recorded as graph nodes), and
// reports each phase as the time between its two events. Here the four kernels do (almost) nothing,
// so each phase's median is what a stage costs before any work of its own: the launch, the event,
// the kernel's end. Variants: the parameter's size (16 bytes against the 560 of SyCtx plus inputs),
// dynamic shared memory, the grid, and a kernel that stores, fences at system scope and releases a
// flag (the least a send does). One GPU, no NVSHMEM; each replay waits behind a GPU spin so the host
// has queued it whole (as the bench's barrier does).
//   nvcc -O3 -std=c++17 -arch=sm_90 phase-floor.cu -o phase-floor && ./phase-floor
#include "check.cuh"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

struct Small {
  unsigned* p;
  int n;
};

struct Big {  // about a stage kernel's parameters: SyCtx (560 bytes) and its inputs
  unsigned long long v[76];
  unsigned* p;
};

__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void emptySmall(Small a) {
  if (a.n == 12345 && threadIdx.x == 0) a.p[0] = 1;
}

__global__ void emptyBig(Big a) {  // reads a few words of the block, as a stage's setup does
  if ((a.v[0] ^ a.v[37] ^ a.v[75]) == 0xdeadbeefull && threadIdx.x == 0) a.p[0] = 1;
}

__global__ void withSmem(Small a) {
  extern __shared__ unsigned s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (s[(threadIdx.x + 1) % blockDim.x] == 0xdeadbeefu) a.p[0] = 1;
}

__global__ void fenceRelease(Small a) {  // each block: stores, a system fence, a release store
  a.p[64 + blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(a.p + blockIdx.x), "r"(1u) : "memory");
  }
}

/// kN fused multiply-adds in 8 independent chains, straight-line code (16 bytes an instruction), run
/// by one warp kPasses times; the cycles of each pass go to out[0..kPasses). The first pass of each
/// launch fetches the code; a second pass runs it from the SM's instruction caches.
template <int kN, int kPasses>
__global__ void straightCode(float a, float b, long long* out) {
  if (threadIdx.x >= 32) return;
  float x[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) x[j] = a * static_cast<float>(threadIdx.x + j);
  for (int pass = 0; pass < kPasses; ++pass) {
    const long long t0 = clock64();
#pragma unroll
    for (int i = 0; i < kN / 8; ++i) {
#pragma unroll
      for (int j = 0; j < 8; ++j) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x[j]) : "f"(a), "f"(b));
    }
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += x[j];
    if (threadIdx.x == 0) {
      out[pass] = clock64() - t0;
      if (sum == 1234.5f) out[7] = 1;
    }
    __syncwarp();
  }
}

/// The bench's structure: one graph of launch(0..3) with an event before the first kernel and after
/// each (graph nodes); `replays` replays, each queued behind a GPU spin (~50 us: the host has queued the
/// whole replay first, as the bench's barrier does). After each replay past the first 20,
/// onReplay(phase us [4]) takes the phases' times.
template <typename Launch, typename OnReplay>
int replayPhases(cudaStream_t s, int replays, Launch launch, OnReplay onReplay) {
  cudaEvent_t ev[5];
  for (auto& e : ev) CK(cudaEventCreate(&e));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CK(cudaEventRecordWithFlags(ev[0], s, cudaEventRecordExternal));
  for (int k = 0; k < 4; ++k) {
    launch(k);
    CK(cudaEventRecordWithFlags(ev[k + 1], s, cudaEventRecordExternal));
  }
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  int rc = 0;
  for (int r = 0; r < replays && rc == 0; ++r) {
    spin<<<1, 32, 0, s>>>(100000);
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    if (r < 20) continue;
    float us[4];
    for (int k = 0; k < 4; ++k) {
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[k], ev[k + 1]));
      us[k] = ms * 1000.0f;
    }
    rc = onReplay(us);
  }
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  for (auto& e : ev) CK(cudaEventDestroy(e));
  return rc;
}

template <typename T>
T medianOf(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// One row of the first table: the four kernels launch(k) and each phase's median.
template <typename Launch>
int measure(const char* name, cudaStream_t s, Launch launch) {
  std::vector<float> t[4];
  const int rc = replayPhases(s, 320, launch, [&](const float* us) {
    for (int k = 0; k < 4; ++k) t[k].push_back(us[k]);
    return 0;
  });
  if (rc != 0) return rc;
  std::printf("| %-58s |", name);
  for (auto& v : t) std::printf(" %5.2f |", medianOf(v));
  std::printf("\n");
  return 0;
}

/// Kernel 1 of the four runs kN instructions of straight-line code twice (one warp); kernels 2 to 4
/// are empty. The phase time of kernel 1 against an empty one, and the in-kernel cycles of both passes.
template <int kN>
int codeRow(const char* name, cudaStream_t s, unsigned* dev) {
  long long* out = reinterpret_cast<long long*>(dev + 1024);
  Small a{dev, 0};
  std::vector<float> t1, t2;
  std::vector<long long> c1, c2;
  const auto launch = [&](int k) {
    if (k == 0) straightCode<kN, 2><<<1, 512, 0, s>>>(1.0001f, 0.5f, out);
    else emptySmall<<<1, 512, 0, s>>>(a);
  };
  const int rc = replayPhases(s, 220, launch, [&](const float* us) {
    t1.push_back(us[0]);
    t2.push_back(us[1]);
    long long h[2];
    CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    c1.push_back(h[0]);
    c2.push_back(h[1]);
    return 0;
  });
  if (rc != 0) return rc;
  std::printf("| %-60s | %5.2f | %5.2f | %lld | %lld |\n", name, medianOf(t1), medianOf(t2), medianOf(c1), medianOf(c2));
  return 0;
}

int main() {
  unsigned* dev = nullptr;
  CK(cudaMalloc(&dev, 1 << 22));
  CK(cudaMemset(dev, 0, 1 << 22));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaFuncSetAttribute(withSmem, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  Small a{dev, 0};
  Big b{};
  b.p = dev;
  std::printf("%s: four kernels in one graph, an event before the first and after each; median us of 300 "
              "replays per phase\n\n| kernels (512 threads a block) | 1 | 2 | 3 | 4 |\n|---|---:|---:|---:|---:|\n",
              prop.name);
  int rc = 0;
  rc |= measure("empty, 1 block, 16-byte parameter", s, [&](int) { emptySmall<<<1, 512, 0, s>>>(a); });
  rc |= measure("empty, 1 block, 616-byte parameter (a stage's)", s, [&](int) { emptyBig<<<1, 512, 0, s>>>(b); });
  rc |= measure("empty, 2 blocks, 616-byte parameter", s, [&](int) { emptyBig<<<2, 512, 0, s>>>(b); });
  rc |= measure("empty, a block an SM, 616-byte parameter", s, [&](int) { emptyBig<<<sms, 512, 0, s>>>(b); });
  rc |= measure("1 block, 20 KB dynamic shared memory", s, [&](int) { withSmem<<<1, 512, 20 * 1024, s>>>(a); });
  rc |= measure("1 block, 20 KB shared in kernels 2 and 4, 2 KB in 1 and 3", s,
                [&](int k) { withSmem<<<1, 512, (k & 1) ? 20 * 1024 : 2048, s>>>(a); });
  rc |= measure("1 block: stores, system fence, release", s, [&](int) { fenceRelease<<<1, 512, 0, s>>>(a); });
  rc |= measure("2 blocks: stores, system fence, release", s, [&](int) { fenceRelease<<<2, 512, 0, s>>>(a); });
  std::printf("\n| one warp runs straight-line code (kernel 1 of 4 each replay) | phase 1 us | empty | pass 1 cycles | pass 2 cycles |\n"
              "|---|---:|---:|---:|---:|\n");
  rc |= codeRow<512>("512 instructions (8 KB)", s, dev);
  rc |= codeRow<2048>("2,048 instructions (32 KB)", s, dev);
  rc |= codeRow<8192>("8,192 instructions (128 KB)", s, dev);
  CK(cudaFree(dev));
  return rc;
}
