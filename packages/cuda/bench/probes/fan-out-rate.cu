// Probe: what bounds the contiguous receive's fan-out. At 4096 tokens, hidden 7168, fp8 rows and
// top-8 over two ranks, a rank receives about 4,096 records from the other rank and copies each
// one's row (7,168 bytes, at its first entry's row) to its 3 other local rows: 29 MB read, 88 MB
// written, inside one GPU's memory. Here kernels do only that, on 24 blocks of 512 threads (one an
// SM, as the receive runs) and on all SMs, the ways a warp can move a record:
//   bulk-1: lane 0 bulk-loads the row into the warp's 8 KB, waits, bulk-stores it to the 3 rows,
//           and waits for them to read the buffer before the next load (the receive as it is);
//   bulk-2: two 4 KB buffers, the next chunk loading while a chunk's stores leave;
//   bulk-lanes: as bulk-1, but lanes 0, 1 and 2 each issue one destination's store;
//   lanes:  the lanes' own 16-byte loads (14 a lane, the row in registers) and stores.
// Rows are placed by a fixed permutation, as the expert blocks scatter them. One GPU, no NVSHMEM;
// each figure is the median of 9 timed launches after 3 warm-up, one JSON line a variant.
//   nvcc -O3 -std=c++17 -arch=sm_90 -I ../../src/native/kernels fan-out-rate.cu -o fan-out-rate && ./fan-out-rate
#include "bulk_copy.cuh"
#include "check.cuh"
#include "timing.cuh"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

constexpr int kRecords = 4096;
constexpr int kFan = 3;                   // rows a record's row is copied to
constexpr uint32_t kRowBytes = 7168;      // an fp8 row at hidden 7168
constexpr int kRows = kRecords * (1 + kFan);
constexpr int kThreads = 512;
constexpr int kWarps = kThreads / 32;
constexpr uint32_t kBufBytes = 8192;      // a warp's shared memory

struct Plan {
  const int* src;  // [kRecords] the record's first row
  const int* dst;  // [kRecords][kFan] its other rows
};

/// kBufs buffers of kBufBytes / kBufs a warp; chunk c of the warp's sequence (its records in turn,
/// each row in kRowBytes / chunk pieces) is in buffer c % kBufs, its mbarrier's phase c / kBufs.
/// kSpread: lanes 0..kFan-1 issue a destination's store each, else lane 0 all.
template <int kBufs, bool kSpread>
__global__ void __launch_bounds__(kThreads) viaBulk(uint8_t* x, Plan plan) {
  extern __shared__ __align__(128) uint8_t smem[];
  constexpr uint32_t kChunk = kBufBytes / kBufs;
  constexpr int kPerRow = (kRowBytes + kChunk - 1) / kChunk;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem) + warp * kBufs;
  uint8_t* buf = smem + 1024 + warp * kBufBytes;
  if (lane == 0) {
    for (int b = 0; b < kBufs; ++b) sy::mbarInit(bar + b);
  }
  __syncwarp();
  const int first = blockIdx.x * kWarps + warp, stride = gridDim.x * kWarps;
  const int mine = first < kRecords ? (kRecords - first + stride - 1) / stride : 0;
  const int chunks = mine * kPerRow;
  const auto part = [&](int c, int& rec, uint32_t& off, uint32_t& bytes) {
    rec = first + (c / kPerRow) * stride;
    off = (c % kPerRow) * kChunk;
    bytes = min(kChunk, kRowBytes - off);
  };
  const auto load = [&](int c) {
    int rec;
    uint32_t off, bytes;
    part(c, rec, off, bytes);
    // The buffer's last stores have read it: with one buffer the chunk before's, with two the one
    // two chunks before (every group but the last).
    if (kBufs == 1) sy::bulkWaitRead();
    else asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    sy::bulkLoad(buf + (c % kBufs) * kChunk, x + static_cast<uint64_t>(plan.src[rec]) * kRowBytes + off, bytes,
                 bar + c % kBufs);
  };
  if (lane == 0 && chunks > 0) load(0);
  for (int c = 0; c < chunks; ++c) {
    int rec;
    uint32_t off, bytes;
    part(c, rec, off, bytes);
    if (lane == 0) sy::mbarWait(bar + c % kBufs, (c / kBufs) & 1);
    __syncwarp();
    const uint8_t* chunk = buf + (c % kBufs) * kChunk;
    for (int k = 0; k < kFan; ++k) {
      if (lane == (kSpread ? k : 0)) {
        sy::bulkStore(x + static_cast<uint64_t>(plan.dst[rec * kFan + k]) * kRowBytes + off, chunk, bytes);
      }
    }
    if (lane < (kSpread ? kFan : 1)) sy::bulkCommit();
    if (kSpread) {  // lane 0 reloads the buffer: the other lanes' stores must have read it
      if (lane < kFan && lane > 0) sy::bulkWaitRead();
      __syncwarp();
    }
    if (lane == 0 && c + 1 < chunks) load(c + 1);
  }
  if (lane < kFan) sy::bulkWaitAll();
}

/// The lanes' own copies: the row into registers (14 vectors a lane), then to each destination.
__global__ void __launch_bounds__(kThreads) viaLanes(uint8_t* x, Plan plan) {
  constexpr int kVecs = kRowBytes / 16, kPer = (kVecs + 31) / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int rec = blockIdx.x * kWarps + warp; rec < kRecords; rec += gridDim.x * kWarps) {
    const uint4* src = reinterpret_cast<const uint4*>(x + static_cast<uint64_t>(plan.src[rec]) * kRowBytes);
    uint4 v[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) v[i] = lane + i * 32 < kVecs ? src[lane + i * 32] : make_uint4(0, 0, 0, 0);
    for (int k = 0; k < kFan; ++k) {
      uint4* dst = reinterpret_cast<uint4*>(x + static_cast<uint64_t>(plan.dst[rec * kFan + k]) * kRowBytes);
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        if (lane + i * 32 < kVecs) dst[lane + i * 32] = v[i];
      }
    }
  }
}

int main() {
  // Every row of x once: record r's first row and its kFan others, by a fixed permutation.
  std::vector<int> perm(kRows);
  for (int i = 0; i < kRows; ++i) perm[i] = i;
  uint32_t seed = 12345;
  for (int i = kRows - 1; i > 0; --i) {
    seed = seed * 1664525u + 1013904223u;
    std::swap(perm[i], perm[seed % static_cast<uint32_t>(i + 1)]);
  }
  std::vector<int> src(kRecords), dst(kRecords * kFan);
  for (int r = 0; r < kRecords; ++r) {
    src[r] = perm[r * (1 + kFan)];
    for (int k = 0; k < kFan; ++k) dst[r * kFan + k] = perm[r * (1 + kFan) + 1 + k];
  }
  uint8_t* x = nullptr;
  int *dSrc = nullptr, *dDst = nullptr;
  CK(cudaMalloc(&x, static_cast<size_t>(kRows) * kRowBytes));
  CK(cudaMalloc(&dSrc, src.size() * sizeof(int)));
  CK(cudaMalloc(&dDst, dst.size() * sizeof(int)));
  CK(cudaMemset(x, 1, static_cast<size_t>(kRows) * kRowBytes));
  CK(cudaMemcpy(dSrc, src.data(), src.size() * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dDst, dst.data(), dst.size() * sizeof(int), cudaMemcpyHostToDevice));
  const Plan plan{dSrc, dDst};
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const double readB = static_cast<double>(kRecords) * kRowBytes, writeB = readB * kFan;
  const auto report = [&](const char* way, int blocks, float us) {
    std::printf(
        "{\"probe\":\"fan-out-rate\",\"way\":\"%s\",\"blocks\":%d,\"threads\":%d,\"readMB\":%.1f,\"writeMB\":%.1f,"
        "\"us\":%.1f,\"GBps\":%.0f}\n",
        way, blocks, kThreads, readB / 1e6, writeB / 1e6, us, (readB + writeB) / (us * 1e3));
  };
  const int smem = 1024 + kWarps * kBufBytes;
  CK(cudaFuncSetAttribute(viaBulk<1, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(viaBulk<2, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CK(cudaFuncSetAttribute(viaBulk<1, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int blocks : {24, sms}) {
    report("bulk-1", blocks, medianUs([&] { viaBulk<1, false><<<blocks, kThreads, smem>>>(x, plan); }));
    report("bulk-2", blocks, medianUs([&] { viaBulk<2, false><<<blocks, kThreads, smem>>>(x, plan); }));
    report("bulk-lanes", blocks, medianUs([&] { viaBulk<1, true><<<blocks, kThreads, smem>>>(x, plan); }));
    report("lanes", blocks, medianUs([&] { viaLanes<<<blocks, kThreads>>>(x, plan); }));
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  cudaFree(x);
  cudaFree(dSrc);
  cudaFree(dDst);
  return 0;
}
