// Peer-write bandwidth (sy_bench_peer_write): plain 16-byte stores into every store-reachable
// peer's NVSHMEM symmetric memory, the transport the product's kernels use within a host.
#pragma once
#include <cstddef>

#include "switchyard_cuda.h"

namespace sy {

/// GB/s this rank writes, `bytes` per peer, `iters` times (collective: every rank of `rt` calls it).
double benchPeerWrite(sy_runtime* rt, size_t bytes, int iters);

}  // namespace sy
