// Probe: how fast a few SMs write to the other GPU over NVLink, and what bounds contiguous combine
// send at 4096 tokens on 24 SMs, both GPUs at once (each writes to the other, as the bench's step
// does). No NVSHMEM: two GPUs of one process with peer access. Not part of the library.
// Build (packages/cuda): nvcc -O3 -std=c++17 -arch=sm_90 -Isrc/native/kernels
//   bench/probes/nvlink-store-rate.cu -o nvlink-store-rate; run: ./nvlink-store-rate (JSON lines).
// Record: results/2026-11-26-combine-send-instructions.
//
// peer-write: 16-byte stores (`st`, grid-stride, 4 a thread in flight) and cp.async.bulk from
//   shared memory (`bulk`, a warp keeps kDepth 4 KB copies in flight), 8 to 132 blocks.
// combine-send-pattern: 4 random expert rows a record summed (pipelinedSums), the partials kept
//   here, sent with 16-byte stores, or staged and bulk-copied (odd records to the peer).
// combine-send-records: the same work shaped as the kernel's: 1 to 8 entries a record as top-8
//   routing over two ranks gives, rows in the contiguous layout's order; also with 4 entries each,
//   with the entries streamed 8 loads a batch (streamedSums), and whole rows bulk-copied into a
//   ring in shared memory by one lane (sumRecordsBulk, checked bit for bit against pipelinedSums).
#include "check.cuh"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "weighted_sum.cuh"

using namespace sy;

constexpr int H = 7168, T = 4096, ENTRIES = 4;
constexpr int RECORDS = 2 * T;               // from this rank and from the other
constexpr int ROWS = RECORDS * ENTRIES;      // expert rows here (470 MB of bf16)
constexpr int kChunk = 4096, kDepth = 3;     // bulk copies: bytes each, in flight a warp

__device__ inline uint32_t smemAddr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ inline void bulkStore(void* dst, const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smemAddr(src)), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N>
__device__ inline void bulkWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
__device__ inline void bulkWaitAll() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Tried in combine send and not kept (the kernel's contiguous 4096 send 730 -> 1,395 µs, this
// probe 511 -> 1,257): the entries' loads as one stream over (stage, source), 8 a batch whatever n
// is, source u's row and weight shuffled from lane u as the stream reaches them.
template <typename Store>
__device__ inline void streamedSums(int n, int s0, int s1, int lane, float wLane, const uint16_t* base,
                                    uint32_t rowLane, Store store) {
  constexpr int kB = 8;
  const int total = (s1 - s0) * n;
  int sL = s0, uL = 0, sS = s0, uS = 0;
  float acc[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) acc[k] = 0.0f;
  uint4 a[kB], b[kB];
  auto load = [&](uint4(&v)[kB], int count) {
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      const uint32_t r = __shfl_sync(0xffffffffu, rowLane, uL);
      const int h0 = sL * 256 + lane * 8;
      v[i] = i < count ? *reinterpret_cast<const uint4*>(base + static_cast<uint64_t>(r) * H + h0) : make_uint4(0, 0, 0, 0);
      if (i < count && ++uL == n) {
        uL = 0;
        ++sL;
      }
    }
  };
  auto sum = [&](const uint4(&v)[kB], int count) {
#pragma unroll
    for (int i = 0; i < kB; ++i) {
      if (i >= count) break;
      accumulateBf16x8(acc, __shfl_sync(0xffffffffu, wLane, uS), v[i]);
      if (++uS == n) {
        store(sS * 256 + lane * 8, packBf16x8(acc));
#pragma unroll
        for (int k = 0; k < 8; ++k) acc[k] = 0.0f;
        uS = 0;
        ++sS;
      }
    }
  };
  load(a, min(kB, total));
  for (int done = 0; done < total; done += 2 * kB) {
    load(b, min(kB, total - done - kB));
    sum(a, min(kB, total - done));
    if (done + kB >= total) break;
    load(a, min(kB, total - done - 2 * kB));
    sum(b, min(kB, total - done - kB));
  }
}

__global__ void __launch_bounds__(512) storeFlat(uint4* dst, uint64_t n) {
  const uint64_t step = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint4 v = make_uint4(threadIdx.x, blockIdx.x, 1, 2);
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * step) {
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (i + u * step < n) dst[i + u * step] = v;
  }
}

__global__ void __launch_bounds__(512) storeBulk(uint8_t* dst, uint64_t bytes) {
  extern __shared__ uint4 sm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  uint8_t* mine = reinterpret_cast<uint8_t*>(sm) + warp * kChunk * kDepth;
  for (int i = lane; i < kChunk * kDepth / 16; i += 32) reinterpret_cast<uint4*>(mine)[i] = make_uint4(i, warp, 3, 4);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncwarp();
  const uint64_t chunks = bytes / kChunk;
  int k = 0;
  for (uint64_t c = static_cast<uint64_t>(blockIdx.x) * warps + warp; c < chunks; c += static_cast<uint64_t>(gridDim.x) * warps) {
    if (lane == 0) {
      bulkWaitRead<kDepth - 1>();
      bulkStore(dst + c * kChunk, mine + (k % kDepth) * kChunk, kChunk);
    }
    ++k;
  }
  if (lane == 0) bulkWaitAll();
}

// The send's pattern: record q (a warp each, grid-stride) sums its 4 rows (weights 0.25 .. 1) and
// writes the bf16 partial to partial row q of `localDst`, or of `peerDst` when the record came
// from the other rank (q odd) and mode > 0. mode 0: every partial local; 1: 16-byte stores; 2:
// staged in shared memory a 512-output chunk at a time, bulk-copied.
__global__ void __launch_bounds__(512) sumRows(const uint16_t* out, const uint32_t* rows, uint16_t* localDst,
                                             uint16_t* peerDst, int mode) {
  extern __shared__ uint4 sm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  uint16_t* stage = reinterpret_cast<uint16_t*>(sm) + warp * 4 * 512;  // four 512-output buffers (1 KB each)
  int k = 0;
  for (int q = blockIdx.x * warps + warp; q < RECORDS; q += gridDim.x * warps) {
    float w8[8];
    uint32_t r8[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      w8[u] = 0.25f * (u + 1);
      r8[u] = u < ENTRIES ? rows[q * ENTRIES + u] : 0;
    }
    const bool remote = mode > 0 && (q & 1);
    uint16_t* dst = (remote ? peerDst : localDst) + static_cast<uint64_t>(q) * H;
    const auto src = [&](int u) { return out + static_cast<uint64_t>(r8[u]) * H; };
    if (mode < 2 || !remote) {
      pipelinedSums<true>(ENTRIES, 0, H / 256, H, lane, w8, src,
                          [&](int h0, uint4 o) { *reinterpret_cast<uint4*>(dst + h0) = o; });
      continue;
    }
    // Staged: each 512 outputs (two stages) into one of four 1 KB buffers, then one bulk copy;
    // a buffer is reused once the copy of four chunks before has read it.
    pipelinedSums<true>(ENTRIES, 0, H / 256, H, lane, w8, src, [&](int h0, uint4 o) {
      const int s = h0 / 256;
      uint16_t* buf = stage + ((k + s / 2) & 3) * 512;
      if ((s & 1) == 0) {
        if (lane == 0) bulkWaitRead<3>();
        __syncwarp();
      }
      *reinterpret_cast<uint4*>(buf + (h0 - s / 2 * 512)) = o;
      if (s & 1) {
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncwarp();
        if (lane == 0) bulkStore(dst + s / 2 * 512, buf, 1024);
      }
    });
    k += H / 512;
  }
  if (mode == 2 && lane == 0) bulkWaitAll();
}

// The kernel's shape of the same work: record q has n[q] entries (1 to 8, as top-8 routing over
// two ranks gives), its rows where the contiguous layout puts them (each expert's rows together,
// by source then token), summed with the n-dispatched pipelinedSums as combine send does; the
// partials of odd records go to the peer with 16-byte stores.
__global__ void __launch_bounds__(512) sumRecords(const uint16_t* out, const uint32_t* rows, const int* rowStart,
                                                const int* nOf, uint16_t* localDst, uint16_t* peerDst, int fixed) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int q = blockIdx.x * warps + warp; q < RECORDS; q += gridDim.x * warps) {
    const int n = fixed > 0 ? fixed : nOf[q];  // fixed < 0: as routed, streamedSums
    float w8[8];
    uint32_t r8[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      w8[u] = 0.25f * (u + 1);
      r8[u] = u < n ? rows[rowStart[q] + u] : 0;
    }
    uint16_t* dst = ((q & 1) ? peerDst : localDst) + static_cast<uint64_t>(q) * H;
    const auto src = [&](int u) { return out + static_cast<uint64_t>(r8[u]) * H; };
    const auto st = [&](int h0, uint4 o) { *reinterpret_cast<uint4*>(dst + h0) = o; };
    if (fixed < 0) {  // streamedSums: lane u holds entry u's row and weight
      streamedSums(n, 0, H / 256, lane, lane < n ? 0.25f * (lane + 1) : 0.0f, out, lane < n ? rows[rowStart[q] + lane] : 0, st);
    } else {
      pipelinedSums<true>(n, 0, H / 256, H, lane, w8, src, st);
    }
  }
}

// The block as a pipeline: warp 15's lane 0 copies each record's whole rows (14 KB, cp.async.bulk)
// into a ring of kSlots rows in shared memory, up to kSlots rows in flight an SM (registers no
// longer bound it); warps 0-14 each sum their 256-output stages of the record from shared memory
// in slot order and store the partial, then free the record's slots.
constexpr int kSlots = 14, kRowBytes = H * 2, kConsumers = 15;
__device__ inline void waitParity(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smemAddr(bar)), "r"(parity) : "memory");
  }
}
__global__ void __launch_bounds__(512) sumRecordsBulk(const uint16_t* out, const uint32_t* rows, const int* rowStart,
                                                    const int* nOf, uint16_t* localDst, uint16_t* peerDst) {
  extern __shared__ __align__(128) uint8_t ring[];
  __shared__ uint64_t full[kSlots], empty[kSlots];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kSlots; ++i) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smemAddr(&full[i])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(&empty[i])), "r"(kConsumers));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warp == kConsumers) {
    if (lane != 0) return;
    int k = 0;
    for (int q = blockIdx.x; q < RECORDS; q += gridDim.x) {
      const int n = nOf[q], start = rowStart[q];
      for (int u = 0; u < n; ++u, ++k) {
        const int slot = k % kSlots;
        waitParity(&empty[slot], ((k / kSlots) & 1) ^ 1);
        const uint32_t bar = smemAddr(&full[slot]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(kRowBytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         smemAddr(ring + slot * kRowBytes)),
                     "l"(out + static_cast<uint64_t>(rows[start + u]) * H), "r"(kRowBytes), "r"(bar)
                     : "memory");
      }
    }
    return;
  }
  int k = 0;
  for (int q = blockIdx.x; q < RECORDS; q += gridDim.x) {
    const int n = nOf[q];
    uint16_t* dst = ((q & 1) ? peerDst : localDst) + static_cast<uint64_t>(q) * H;
    for (int st = warp; st < H / 256; st += kConsumers) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int u = 0; u < n; ++u) {
        const int slot = (k + u) % kSlots;
        waitParity(&full[slot], ((k + u) / kSlots) & 1);
        const uint4 v = *reinterpret_cast<const uint4*>(ring + slot * kRowBytes + st * 512 + lane * 16);
        accumulateBf16x8(acc, 0.25f * (u + 1), v);
      }
      *reinterpret_cast<uint4*>(dst + st * 256 + lane * 8) = packBf16x8(acc);
    }
    __syncwarp();
    if (lane == 0) {
      for (int u = 0; u < n; ++u) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(&empty[(k + u) % kSlots])) : "memory");
    }
    k += n;
  }
}

// Finite bf16 values that differ from row to row (a check that mixed rows up would see it).
__global__ void fillRows(uint16_t* v, uint64_t n) {
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    v[i] = static_cast<uint16_t>(0x3c00u | ((static_cast<uint32_t>(i) * 2654435761u) >> 22) | ((i & 1) << 15));
}

struct Gpu {
  cudaStream_t s;
  cudaEvent_t a, b;
  uint8_t* buf;  // written by the other GPU
  uint16_t* out;
  uint32_t* rows;
  uint16_t* part;
  uint32_t* layoutRows;  // sumRecords: each record's rows in the contiguous layout's order
  int* rowStart;
  int* nOf;
  int layoutEntries;
};

template <typename F>
float timeBoth(Gpu* g, F launch) {  // median over 15 of the slower GPU, both launched together
  std::vector<float> v;
  for (int it = 0; it < 18; ++it) {
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaEventRecord(g[d].a, g[d].s);
      launch(d);
      cudaEventRecord(g[d].b, g[d].s);
    }
    float worst = 0;
    for (int d = 0; d < 2; ++d) {
      cudaSetDevice(d);
      cudaEventSynchronize(g[d].b);
      float ms;
      cudaEventElapsedTime(&ms, g[d].a, g[d].b);
      worst = std::max(worst, ms * 1000);
    }
    if (it >= 3) v.push_back(worst);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::fprintf(stderr, "needs two GPUs\n");
    return 1;
  }
  const uint64_t bufBytes = 256ull << 20;
  Gpu g[2];
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceEnablePeerAccess(1 - d, 0));
    CK(cudaStreamCreateWithFlags(&g[d].s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&g[d].a));
    CK(cudaEventCreate(&g[d].b));
    CK(cudaMalloc(&g[d].buf, bufBytes));
    CK(cudaMalloc(&g[d].out, static_cast<uint64_t>(ROWS) * 5 / 4 * H * 2));
    CK(cudaMalloc(&g[d].part, static_cast<uint64_t>(RECORDS) * H * 2));
    CK(cudaMalloc(&g[d].rows, static_cast<uint64_t>(ROWS) * 4));
    fillRows<<<1024, 256>>>(g[d].out, static_cast<uint64_t>(ROWS) * 5 / 4 * H);
    CK(cudaGetLastError());
    std::vector<uint32_t> perm(ROWS);
    for (int i = 0; i < ROWS; ++i) perm[i] = i;
    srand(7 + d);
    for (int i = ROWS - 1; i > 0; --i) std::swap(perm[i], perm[rand() % (i + 1)]);
    CK(cudaMemcpy(g[d].rows, perm.data(), static_cast<uint64_t>(ROWS) * 4, cudaMemcpyHostToDevice));
    {  // top-8 of 256 experts a token, 128 experts a rank: record (s, t) names this rank's experts of token t
      std::vector<std::vector<int>> tokenExperts(RECORDS);
      std::vector<int> expertRows(128, 0);
      for (int q = 0; q < RECORDS; ++q) {
        std::vector<int> all(256);
        for (int i = 0; i < 256; ++i) all[i] = i;
        for (int k = 0; k < 8; ++k) std::swap(all[k], all[k + rand() % (256 - k)]);
        for (int k = 0; k < 8; ++k)
          if (all[k] < 128) tokenExperts[q].push_back(all[k]);
        if (tokenExperts[q].empty()) tokenExperts[q].push_back(rand() % 128);
        for (int e : tokenExperts[q]) ++expertRows[e];
      }
      std::vector<int> base(129, 0), next(128, 0);
      for (int e = 0; e < 128; ++e) base[e + 1] = base[e] + (expertRows[e] + 127) / 128 * 128;
      std::vector<uint32_t> lr;
      std::vector<int> start, nq;
      // records in (source, token) order: even q source 0... keep q order, rows by order of arrival
      for (int q = 0; q < RECORDS; ++q) {
        start.push_back(static_cast<int>(lr.size()));
        nq.push_back(static_cast<int>(tokenExperts[q].size()));
        for (int e : tokenExperts[q]) lr.push_back(static_cast<uint32_t>(base[e] + next[e]++));
      }
      g[d].layoutEntries = static_cast<int>(lr.size());
      lr.resize(lr.size() + 8, 0);  // a fixed 4 past the last record
      if (base[128] > ROWS * 5 / 4) { std::fprintf(stderr, "layout rows %d\n", base[128]); return 1; }
      CK(cudaMalloc(&g[d].layoutRows, lr.size() * 4));
      CK(cudaMalloc(&g[d].rowStart, start.size() * 4));
      CK(cudaMalloc(&g[d].nOf, nq.size() * 4));
      CK(cudaMemcpy(g[d].layoutRows, lr.data(), lr.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(g[d].rowStart, start.data(), start.size() * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(g[d].nOf, nq.data(), nq.size() * 4, cudaMemcpyHostToDevice));
    }
    CK(cudaFuncSetAttribute(storeBulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 16 * kChunk * kDepth));
    CK(cudaFuncSetAttribute(sumRows, cudaFuncAttributeMaxDynamicSharedMemorySize, 16 * 4096));
    CK(cudaFuncSetAttribute(sumRecordsBulk, cudaFuncAttributeMaxDynamicSharedMemorySize, kSlots * kRowBytes));
  }
  CK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("{\"device\": \"%s\", \"sms\": %d}\n", prop.name, prop.multiProcessorCount);
  const uint64_t bytes = 128ull << 20;  // each GPU writes 128 MB into the other's buffer
  for (const int blocks : {8, 16, 24, 32, 48, 66, 132}) {
    const float st = timeBoth(g, [&](int d) {
      storeFlat<<<blocks, 512, 0, g[d].s>>>(reinterpret_cast<uint4*>(g[1 - d].buf), bytes / 16);
    });
    const float bulk = timeBoth(g, [&](int d) {
      storeBulk<<<blocks, 512, 16 * kChunk * kDepth, g[d].s>>>(g[1 - d].buf, bytes);
    });
    std::printf("{\"probe\": \"peer-write\", \"blocks\": %d, \"bytes\": %llu, \"st_us\": %.1f, \"st_GBps\": %.1f, "
                "\"bulk_us\": %.1f, \"bulk_GBps\": %.1f}\n",
                blocks, static_cast<unsigned long long>(bytes), st, bytes / st / 1e3, bulk, bytes / bulk / 1e3);
    CK(cudaGetLastError());
  }
  for (const int blocks : {24, 48, 132}) {
    for (int mode = 0; mode < 3; ++mode) {
      const float us = timeBoth(g, [&](int d) {
        sumRows<<<blocks, 512, 16 * 4096, g[d].s>>>(g[d].out, g[d].rows, g[d].part,
                                                    reinterpret_cast<uint16_t*>(g[1 - d].buf), mode);
      });
      static const char* names[] = {"local", "peer-st", "peer-bulk"};
      std::printf("{\"probe\": \"combine-send-pattern\", \"blocks\": %d, \"partials\": \"%s\", \"us\": %.1f, "
                  "\"rows_read_MB\": %.1f, \"to_peer_MB\": %.1f}\n",
                  blocks, names[mode], us, static_cast<double>(ROWS) * H * 2 / 1e6,
                  mode == 0 ? 0.0 : static_cast<double>(RECORDS / 2) * H * 2 / 1e6);
      CK(cudaGetLastError());
    }
  }
  for (const int blocks : {24, 132}) {
    for (const int fixed : {0, 4, -1}) {
      const float us = timeBoth(g, [&](int d) {
        sumRecords<<<blocks, 512, 0, g[d].s>>>(g[d].out, g[d].layoutRows, g[d].rowStart, g[d].nOf, g[d].part,
                                               reinterpret_cast<uint16_t*>(g[1 - d].buf), fixed);
      });
      std::printf("{\"probe\": \"combine-send-records\", \"blocks\": %d, \"entries\": \"%s\", \"us\": %.1f, "
                  "\"rows_read_MB\": %.1f}\n",
                  blocks, fixed > 0 ? "4 each" : fixed < 0 ? "as routed, streamedSums" : "as routed (1 to 8)", us,
                  static_cast<double>(fixed > 0 ? RECORDS * fixed : g[0].layoutEntries) * H * 2 / 1e6);
      CK(cudaGetLastError());
    }
  }
  {  // the bulk pipeline's local partials (even records) against sumRecords' (pipelinedSums), bit for bit
    std::vector<uint16_t> ref(static_cast<uint64_t>(RECORDS) * H), got(ref.size());
    CK(cudaSetDevice(0));
    sumRecords<<<24, 512>>>(g[0].out, g[0].layoutRows, g[0].rowStart, g[0].nOf, g[0].part, reinterpret_cast<uint16_t*>(g[1].buf), 0);
    CK(cudaMemcpy(ref.data(), g[0].part, ref.size() * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemset(g[0].part, 0, ref.size() * 2));
    sumRecordsBulk<<<24, 512, kSlots * kRowBytes>>>(g[0].out, g[0].layoutRows, g[0].rowStart, g[0].nOf, g[0].part,
                                                   reinterpret_cast<uint16_t*>(g[1].buf));
    CK(cudaMemcpy(got.data(), g[0].part, got.size() * 2, cudaMemcpyDeviceToHost));
    uint64_t diff = 0;
    for (int q = 0; q < RECORDS; q += 2)
      for (int h = 0; h < H; ++h) diff += ref[static_cast<uint64_t>(q) * H + h] != got[static_cast<uint64_t>(q) * H + h];
    std::printf("{\"probe\": \"bulk-check\", \"values_differing\": %llu}\n", static_cast<unsigned long long>(diff));
  }
  for (const int blocks : {24, 48, 132}) {
    const float us = timeBoth(g, [&](int d) {
      sumRecordsBulk<<<blocks, 512, kSlots * kRowBytes, g[d].s>>>(g[d].out, g[d].layoutRows, g[d].rowStart, g[d].nOf,
                                                                 g[d].part, reinterpret_cast<uint16_t*>(g[1 - d].buf));
    });
    std::printf("{\"probe\": \"combine-send-records\", \"blocks\": %d, \"entries\": \"as routed, whole rows by bulk copy\", "
                "\"us\": %.1f, \"rows_read_MB\": %.1f}\n",
                blocks, us, static_cast<double>(g[0].layoutEntries) * H * 2 / 1e6);
    CK(cudaGetLastError());
  }
  for (int d = 0; d < 2; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaDeviceSynchronize());
  }
  return 0;
}
