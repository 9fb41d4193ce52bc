// The bench library's C ABI (include/switchyard_bench.h): random inputs, memory figures, the
// peer-write bench and the NCCL baseline. Same rules as the product's c_api.cc: every body runs
// inside `guard` (this library's own copy, with its own handle table and last error), nothing escapes.
#include <cuda_runtime.h>

#include <memory>

#include "../../../src/native/host/error.h"
#include "../../../src/native/host/guard.h"
#include "../../../src/native/host/handles.h"
#include "../kernels/launch_fill.h"
#include "baseline.h"
#include "peer_write.h"
#include "switchyard_bench.h"

extern "C" {

const char* sy_bench_last_error(const void* handle) {
  const char* own = sy::handleError(handle);
  return own != nullptr ? own : tlsLastError.c_str();
}

int sy_bench_peer_write(sy_runtime* rt, size_t bytes, int iters, double* gbps) {
  return guard(nullptr, [&] {
    SY_HANDLE(rt, "sy_bench_peer_write: rt");
    SY_HANDLE(gbps, "sy_bench_peer_write: gbps");
    *gbps = sy::benchPeerWrite(rt, bytes, iters);
  });
}

int sy_mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes) {
  return guard(nullptr, [&] {
    size_t f = 0, t = 0;
    SY_CHECK_CUDA(cudaMemGetInfo(&f, &t));
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
  });
}

int sy_fill_random(void* ptr, uint64_t count, int kind, uint64_t seed, void* stream) {
  return guard(nullptr, [&] {
    SY_REQUIRE(count == 0 || ptr != nullptr, "sy_fill_random: ptr is NULL");
    SY_REQUIRE(kind >= 0 && kind <= 3, "sy_fill_random: kind " << kind << " unknown");
    sy::clearStaleError("sy_fill_random");
    SY_CHECK_CUDA(sy::launchFillRandom(ptr, count, kind, seed, static_cast<cudaStream_t>(stream)));
  });
}

int sy_nccl_get_unique_id(uint8_t out[SY_UNIQUE_ID_BYTES]) {
  return guard(nullptr, [&] {
    SY_HANDLE(out, "sy_nccl_get_unique_id: out");
    sy::ncclUniqueIdBytes(out);
  });
}

int sy_nccl_create(const uint8_t unique_id[SY_UNIQUE_ID_BYTES], int rank, int ranks, int device, sy_nccl** out) {
  return guard(nullptr, [&] {
    SY_HANDLE(out, "sy_nccl_create: out");
    *out = nullptr;
    sy_nccl* nc = sy::createNccl(unique_id, rank, ranks, device);
    *out = static_cast<sy_nccl*>(sy::registerHandle(sy::Kind::kNccl, std::shared_ptr<sy_nccl>(nc)));
  });
}

int sy_nccl_version(const sy_nccl* nc, int* version) {
  return guard(nc, [&] {
    SY_HOLD(sy_nccl, nc, sy::Kind::kNccl, "sy_nccl_version: nc");
    SY_HANDLE(version, "sy_nccl_version: version");
    *version = nc->version;
  });
}

int sy_nccl_destroy(sy_nccl* nc) {
  if (nc == nullptr) return SY_OK;
  return guard(nullptr, [&] {
    const std::shared_ptr<void> obj = sy::retireHandle(nc, sy::Kind::kNccl, "sy_nccl_destroy: nc", nullptr, nullptr);
    sy::destroyNccl(static_cast<sy_nccl*>(obj.get()));
  });
}

int sy_baseline_create(sy_nccl* nc, const uint64_t* params, size_t count, sy_baseline** out) {
  return guard(nc, [&] {
    SY_HOLD(sy_nccl, nc, sy::Kind::kNccl, "sy_baseline_create: nc");
    SY_HANDLE(out, "sy_baseline_create: out");
    *out = nullptr;
    int sms = 0;
    SY_CHECK_CUDA(cudaSetDevice(nc->device));
    SY_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, nc->device));
    sy_baseline* bl = sy::createBaseline(nc, params, count, sms);
    *out = static_cast<sy_baseline*>(sy::registerHandle(sy::Kind::kBaseline, std::shared_ptr<sy_baseline>(bl)));
  });
}

int sy_baseline_destroy(sy_baseline* bl) {
  if (bl == nullptr) return SY_OK;
  return guard(nullptr, [&] {
    const std::shared_ptr<void> obj =
        sy::retireHandle(bl, sy::Kind::kBaseline, "sy_baseline_destroy: bl", nullptr, nullptr);
    sy::destroyBaseline(static_cast<sy_baseline*>(obj.get()));
  });
}

int sy_baseline_dispatch(sy_baseline* bl, const void* x, const float* scales, const int32_t* topk_idx, int num_tokens,
                         void* stream) {
  return guard(bl, [&] {
    SY_HOLD(sy_baseline, bl, sy::Kind::kBaseline, "sy_baseline_dispatch: bl");
    sy::baselineDispatch(bl, x, scales, topk_idx, num_tokens, static_cast<cudaStream_t>(stream));
  });
}

int sy_baseline_combine(sy_baseline* bl, const void* expert_out, const int32_t* topk_idx, const float* topk_weights,
                        int num_tokens, void* y, void* stream) {
  return guard(bl, [&] {
    SY_HOLD(sy_baseline, bl, sy::Kind::kBaseline, "sy_baseline_combine: bl");
    sy::baselineCombine(bl, expert_out, topk_idx, topk_weights, num_tokens, y, static_cast<cudaStream_t>(stream));
  });
}

int sy_baseline_region(const sy_baseline* bl, int region, void** ptr, uint64_t* bytes) {
  return guard(bl, [&] {
    SY_HOLD(sy_baseline, bl, sy::Kind::kBaseline, "sy_baseline_region: bl");
    SY_REQUIRE(bl->alive, "sy_baseline_region: the baseline was destroyed");
    SY_REQUIRE(region >= sy::R_RECV_X && region <= sy::R_RECV_META,
               "sy_baseline_region: region " << region << " is not an output region (recvX, recvScales, recvMeta)");
    const uint64_t n = bl->ctx.p.bytes(region);
    if (ptr) *ptr = n > 0 ? bl->out[region - sy::R_RECV_X] : nullptr;
    if (bytes) *bytes = n;
  });
}

int sy_baseline_counts(const sy_baseline* bl, const int32_t** counts) {
  return guard(bl, [&] {
    SY_HOLD(sy_baseline, bl, sy::Kind::kBaseline, "sy_baseline_counts: bl");
    SY_HANDLE(counts, "sy_baseline_counts: counts");
    *counts = bl->ctx.counts;
  });
}

int sy_baseline_memory(const sy_baseline* bl, uint64_t* device_bytes) {
  return guard(bl, [&] {
    SY_HOLD(sy_baseline, bl, sy::Kind::kBaseline, "sy_baseline_memory: bl");
    SY_HANDLE(device_bytes, "sy_baseline_memory: device_bytes");
    *device_bytes = bl->deviceBytes;
  });
}

}  // extern "C"
