// Warp-wide copies with the widest access the addresses allow (16-byte vectors on aligned rows),
// for rows written straight into a peer's heap over NVLink or into the local heap.
#pragma once
#include <cstdint>

namespace sy {

constexpr int kWarp = 32;
constexpr uint32_t kFullMask = 0xffffffffu;

template <typename V>
__device__ inline void warpCopyAs(void* dst, const void* src, uint64_t bytes, int lane) {
  V* d = reinterpret_cast<V*>(dst);
  const V* s = reinterpret_cast<const V*>(src);
  const uint64_t n = bytes / sizeof(V);
  uint64_t i = lane;
  // Four loads in flight per lane before the stores.
  for (; i + 3 * kWarp < n; i += 4 * kWarp) {
    const V a = s[i], b = s[i + kWarp], c = s[i + 2 * kWarp], e = s[i + 3 * kWarp];
    d[i] = a;
    d[i + kWarp] = b;
    d[i + 2 * kWarp] = c;
    d[i + 3 * kWarp] = e;
  }
  for (; i < n; i += kWarp) d[i] = s[i];
}

/// Copies `bytes` from `src` to `dst` with the whole warp (every lane calls it with the same arguments).
__device__ inline void warpCopy(void* dst, const void* src, uint64_t bytes, int lane) {
  const uint64_t a = reinterpret_cast<uint64_t>(dst) | reinterpret_cast<uint64_t>(src) | bytes;
  if ((a & 15) == 0) warpCopyAs<uint4>(dst, src, bytes, lane);
  else if ((a & 7) == 0) warpCopyAs<uint2>(dst, src, bytes, lane);
  else if ((a & 3) == 0) warpCopyAs<uint32_t>(dst, src, bytes, lane);
  else if ((a & 1) == 0) warpCopyAs<uint16_t>(dst, src, bytes, lane);
  else warpCopyAs<uint8_t>(dst, src, bytes, lane);
}

}  // namespace sy

namespace sy {

/// The widest vector (16, 8, 4, 2 or 1 bytes) that every address and size in `bits` allows.
__device__ inline int vectorWidth(uint64_t bits) {
  if ((bits & 15) == 0) return 16;
  if ((bits & 7) == 0) return 8;
  if ((bits & 3) == 0) return 4;
  if ((bits & 1) == 0) return 2;
  return 1;
}

/// The whole block copies `n` rows of `bytes` each; `rows(q, dst, src)` gives row q's addresses.
/// Work is flattened over (row, vector) so every thread is busy however few rows there are.
template <typename V, typename F>
__device__ inline void blockCopyRowsAs(int n, uint32_t bytes, F rows) {
  const uint32_t vecs = bytes / sizeof(V);
  const uint32_t total = static_cast<uint32_t>(n) * vecs;
  constexpr int kUnroll = 4;
  for (uint32_t base = threadIdx.x; base < total; base += kUnroll * blockDim.x) {
    V v[kUnroll];
    V* d[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint32_t idx = base + u * blockDim.x;
      d[u] = nullptr;
      if (idx < total) {
        const uint32_t q = idx / vecs;
        const uint32_t e = idx - q * vecs;
        uint8_t* dst;
        const uint8_t* src;
        rows(static_cast<int>(q), dst, src);
        v[u] = reinterpret_cast<const V*>(src)[e];
        d[u] = reinterpret_cast<V*>(dst) + e;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (d[u] != nullptr) *d[u] = v[u];
    }
  }
}

/// blockCopyRowsAs with the widest vector `align` (the OR of every base address and the row size) allows.
template <typename F>
__device__ inline void blockCopyRows(int n, uint32_t bytes, uint64_t align, F rows) {
  switch (vectorWidth(align | bytes)) {
    case 16: blockCopyRowsAs<uint4>(n, bytes, rows); break;
    case 8: blockCopyRowsAs<uint2>(n, bytes, rows); break;
    case 4: blockCopyRowsAs<uint32_t>(n, bytes, rows); break;
    case 2: blockCopyRowsAs<uint16_t>(n, bytes, rows); break;
    default: blockCopyRowsAs<uint8_t>(n, bytes, rows); break;
  }
}

}  // namespace sy
