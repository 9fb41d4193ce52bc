// The C ABI (include/switchyard_cuda.h): every entry point runs its body inside `guard`, which
// turns any exception into a status code and a message for sy_last_error. Nothing escapes.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <string>

#include "../kernels/params.cuh"
#include "endpoint.h"
#include "error.h"
#include "guard.h"
#include "runtime.h"
#include "switchyard_cuda.h"

namespace {

cudaStream_t asStream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

extern "C" {

static_assert(SY_PARAM_COUNT == sy::kParamCount, "switchyard_cuda.h's SY_PARAM_COUNT must match params.cuh");

// SY_VERSION ("x.y.z") comes from the build: CMakeLists.txt reads the repository's VERSION file.
#ifndef SY_VERSION
#error "SY_VERSION is not defined: build with CMake (it reads the repository's VERSION file) or pass -DSY_VERSION='\"x.y.z\"'"
#endif

const char* sy_version(void) {
  return "switchyard-cuda " SY_VERSION " (protocol version 2: masked and contiguous layouts)";
}

const char* sy_param_names(void) { return sy::kParamNames; }

const char* sy_status_name(int status) {
  switch (status) {
#define SY_STATUS_CASE(value, name, meaning) \
  case value:                                \
    return #name;
    SY_CONTRACT_STATUSES(SY_STATUS_CASE)
#undef SY_STATUS_CASE
    default: return nullptr;
  }
}

const char* sy_last_error(const void* handle) {
  const char* own = sy::handleError(handle);
  return own != nullptr ? own : tlsLastError.c_str();
}

int sy_get_unique_id(uint8_t out[SY_UNIQUE_ID_BYTES]) {
  return guard(nullptr, [&] { sy::getUniqueId(out); });
}

int sy_runtime_create(const uint8_t unique_id[SY_UNIQUE_ID_BYTES], int rank, int ranks, int device,
                      sy_runtime** out) {
  return sy_runtime_create_with_options(unique_id, rank, ranks, device, nullptr, out);
}

int sy_runtime_info_get(const sy_runtime* rt, sy_runtime_info* out) {
  return guard(rt, [&] {
    SY_HOLD(sy_runtime, rt, sy::Kind::kRuntime, "sy_runtime_info_get: rt");
    SY_HANDLE(out, "sy_runtime_info_get: out");
    *out = sy_runtime_info{rt->rank, rt->ranks, rt->device, rt->nodeRanks, rt->smCount, rt->directPeers, rt->gpuShare};
  });
}

int sy_runtime_destroy(sy_runtime* rt) {
  if (rt == nullptr) return SY_OK;
  // Refused (SY_ERR_STATE, the handle stays live) while endpoints of it are alive.
  return guard(rt, [&] {
    sy::retireHandle(rt, sy::Kind::kRuntime, "sy_runtime_destroy: rt", nullptr,
                     [](void* o) { sy::destroyRuntime(static_cast<sy_runtime*>(o)); });
  });
}

int sy_barrier(sy_runtime* rt, void* stream) {
  return guard(rt, [&] {
    SY_HOLD(sy_runtime, rt, sy::Kind::kRuntime, "sy_barrier: rt");
    sy::barrier(rt, asStream(stream));
  });
}

int sy_endpoint_create(sy_runtime* rt, const uint64_t* params, size_t count, uint64_t symmetric_bytes,
                       uint64_t timeout_ns, sy_endpoint** out) {
  return guard(rt, [&] {
    SY_HOLD(sy_runtime, rt, sy::Kind::kRuntime, "sy_endpoint_create: rt");
    SY_HANDLE(out, "sy_endpoint_create: out");
    *out = nullptr;
    sy_endpoint* ep = sy::createEndpoint(rt, params, count, symmetric_bytes, timeout_ns);
    *out = static_cast<sy_endpoint*>(sy::registerHandle(sy::Kind::kEndpoint, std::shared_ptr<sy_endpoint>(ep)));
  });
}

int sy_endpoint_destroy(sy_endpoint* ep) {
  if (ep == nullptr) return SY_OK;
  // The handle dies first (new calls are refused), the device's waits are aborted so that calls in
  // flight return, then the teardown runs once none is left; the memory goes with the last holder.
  return guard(nullptr, [&] {
    const std::shared_ptr<void> obj =
        sy::retireHandle(ep, sy::Kind::kEndpoint, "sy_endpoint_destroy: ep",
                         [](void* o) { sy::abortEndpoint(static_cast<sy_endpoint*>(o)); }, nullptr);
    sy::destroyEndpoint(static_cast<sy_endpoint*>(obj.get()));
  });
}

int sy_endpoint_region(const sy_endpoint* ep, int region, void** ptr, uint64_t* bytes) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_region: ep");
    SY_REQUIRE(region >= 0 && region < sy::R_REGION_COUNT, "sy_endpoint_region: region " << region << " unknown");
    SY_REQUIRE(ep->alive, "sy_endpoint_region: the endpoint was destroyed");
    const uint64_t n = ep->ctx.p.bytes(region);
    // Symmetric regions in the heap, local ones (masked recvX / recvScales, recvMeta) in the local allocation.
    uint8_t* at = sy::regionAddress(ep, region);
    if (ptr) *ptr = at;
    if (bytes) *bytes = at != nullptr ? n : 0;
  });
}

int sy_endpoint_counts(const sy_endpoint* ep, const int32_t** counts) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_counts: ep");
    SY_HANDLE(counts, "sy_endpoint_counts: counts");
    *counts = ep->ctx.t.counts;
  });
}

int sy_dispatch_send(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topk_idx,
                     const float* topk_weights, int num_tokens, void* stream) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_dispatch_send: ep");
    sy::dispatchSend(ep, x, scales, topk_idx, topk_weights, num_tokens, asStream(stream));
  });
}

int sy_dispatch_recv(sy_endpoint* ep, void* stream) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_dispatch_recv: ep");
    sy::dispatchRecv(ep, asStream(stream));
  });
}

int sy_endpoint_set_output(sy_endpoint* ep, int exact) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_set_output: ep");
    SY_REQUIRE(exact == 0 || exact == 1, "sy_endpoint_set_output: exact " << exact << " must be 0 or 1");
    sy::setOutput(ep, exact == 1);
  });
}

int sy_dispatch_recv_rows(sy_endpoint* ep, void* stream, uint64_t* rows, sy_error_info* info) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_dispatch_recv_rows: ep");
    SY_HANDLE(rows, "sy_dispatch_recv_rows: rows");
    *rows = sy::dispatchRecvRows(ep, asStream(stream), info);
  });
}

int sy_dispatch_recv_into(sy_endpoint* ep, void* x, float* scales, void* stream) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_dispatch_recv_into: ep");
    sy::dispatchRecvInto(ep, x, scales, asStream(stream));
  });
}

int sy_combine_send(sy_endpoint* ep, const void* expert_out, void* stream) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_combine_send: ep");
    sy::combineSend(ep, expert_out, asStream(stream));
  });
}

int sy_combine_recv(sy_endpoint* ep, const int32_t* topk_idx, const float* topk_weights, int num_tokens, void* y,
                    void* stream) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_combine_recv: ep");
    sy::combineRecv(ep, topk_idx, topk_weights, num_tokens, y, asStream(stream));
  });
}

int sy_dispatch(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topk_idx,
                const float* topk_weights, int num_tokens, void* stream) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_dispatch: ep");
    sy::dispatch(ep, x, scales, topk_idx, topk_weights, num_tokens, asStream(stream));
  });
}

int sy_combine(sy_endpoint* ep, const void* expert_out, const int32_t* topk_idx, const float* topk_weights,
               int num_tokens, void* y, void* stream) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_combine: ep");
    sy::combine(ep, expert_out, topk_idx, topk_weights, num_tokens, y, asStream(stream));
  });
}

int sy_endpoint_check(sy_endpoint* ep, void* stream, sy_error_info* info) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_check: ep");
    sy::check(ep, asStream(stream), info);
  });
}

int sy_endpoint_enable_stats(sy_endpoint* ep) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_enable_stats: ep");
    sy::enableStats(ep);
  });
}

int sy_endpoint_stats(sy_endpoint* ep, void* stream, size_t ranks, uint32_t* dispatch_sent, uint32_t* dispatch_received,
                      uint32_t* combine_sent, uint32_t* combine_received, uint64_t* dispatch_wait_ns,
                      uint64_t* combine_wait_ns) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_stats: ep");
    sy::readStats(ep, asStream(stream), ranks, dispatch_sent, dispatch_received, combine_sent, combine_received,
                  dispatch_wait_ns, combine_wait_ns);
  });
}

int sy_device_alloc(size_t bytes, void** ptr) {
  return guard(nullptr, [&] {
    SY_HANDLE(ptr, "sy_device_alloc: ptr");
    *ptr = nullptr;
    if (bytes > 0) SY_CHECK_CUDA(cudaMalloc(ptr, bytes));
  });
}

int sy_device_free(void* ptr) {
  return guard(nullptr, [&] { SY_CHECK_CUDA(cudaFree(ptr)); });
}

int sy_memcpy_to_device(void* dst, const void* src, size_t bytes) {
  return guard(nullptr, [&] {
    SY_REQUIRE(bytes == 0 || (dst != nullptr && src != nullptr), "sy_memcpy_to_device: dst or src is NULL");
    if (bytes) SY_CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  });
}

int sy_memcpy_to_host(void* dst, const void* src, size_t bytes) {
  return guard(nullptr, [&] {
    SY_REQUIRE(bytes == 0 || (dst != nullptr && src != nullptr), "sy_memcpy_to_host: dst or src is NULL");
    if (bytes) SY_CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  });
}

int sy_memset_device(void* dst, int value, size_t bytes) {
  return guard(nullptr, [&] {
    SY_REQUIRE(bytes == 0 || dst != nullptr, "sy_memset_device: dst is NULL");
    if (bytes) SY_CHECK_CUDA(cudaMemset(dst, value, bytes));
  });
}

int sy_stream_create(void** stream) {
  return guard(nullptr, [&] {
    SY_HANDLE(stream, "sy_stream_create: stream");
    cudaStream_t s = nullptr;
    SY_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = s;
  });
}

int sy_stream_destroy(void* stream) {
  return guard(nullptr, [&] {
    if (stream) SY_CHECK_CUDA(cudaStreamDestroy(asStream(stream)));
  });
}

int sy_stream_synchronize(void* stream) {
  return guard(nullptr, [&] { SY_CHECK_CUDA(cudaStreamSynchronize(asStream(stream))); });
}

int sy_graph_begin_capture(void* stream) {
  return guard(nullptr, [&] {
    SY_REQUIRE(stream != nullptr, "sy_graph_begin_capture: capture needs a created stream, not the default one");
    SY_CHECK_CUDA(cudaStreamBeginCapture(asStream(stream), cudaStreamCaptureModeThreadLocal));
  });
}

int sy_graph_end_capture(void* stream, void** graph_exec) {
  return guard(nullptr, [&] {
    SY_HANDLE(graph_exec, "sy_graph_end_capture: graph_exec");
    cudaGraph_t graph = nullptr;
    // Ending a capture that was never begun fails with cudaErrorIllegalState: SY_CHECK_CUDA takes
    // it out of the thread's last-error slot too (the next launch once reported it as its own).
    SY_CHECK_CUDA(cudaStreamEndCapture(asStream(stream), &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
    sy::ignoreCuda(cudaGraphDestroy(graph));
    SY_CHECK_CUDA(rc);
    *graph_exec = exec;
  });
}

int sy_graph_launch(void* graph_exec, void* stream) {
  return guard(nullptr, [&] {
    SY_HANDLE(graph_exec, "sy_graph_launch: graph_exec");
    SY_CHECK_CUDA(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph_exec), asStream(stream)));
  });
}

int sy_graph_destroy(void* graph_exec) {
  return guard(nullptr, [&] {
    if (graph_exec) SY_CHECK_CUDA(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph_exec)));
  });
}

int sy_event_create(void** event) {
  return guard(nullptr, [&] {
    SY_HANDLE(event, "sy_event_create: event");
    cudaEvent_t e = nullptr;
    SY_CHECK_CUDA(cudaEventCreate(&e));
    *event = e;
  });
}

int sy_event_destroy(void* event) {
  return guard(nullptr, [&] {
    if (event) SY_CHECK_CUDA(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  });
}

int sy_event_record(void* event, void* stream, int external) {
  return guard(nullptr, [&] {
    SY_HANDLE(event, "sy_event_record: event");
    SY_CHECK_CUDA(cudaEventRecordWithFlags(static_cast<cudaEvent_t>(event), asStream(stream),
                                           external ? cudaEventRecordExternal : cudaEventRecordDefault));
  });
}

int sy_event_elapsed_ms(void* start, void* end, float* ms) {
  return guard(nullptr, [&] {
    SY_HANDLE(start, "sy_event_elapsed_ms: start");
    SY_HANDLE(end, "sy_event_elapsed_ms: end");
    SY_HANDLE(ms, "sy_event_elapsed_ms: ms");
    SY_CHECK_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(end)));
    SY_CHECK_CUDA(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
  });
}

int sy_endpoint_set_blocks(sy_endpoint* ep, int blocks) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_set_blocks: ep");
    sy::setBlocks(ep, blocks);
  });
}

int sy_endpoint_memory(const sy_endpoint* ep, uint64_t* device_bytes, uint64_t* local_bytes) {
  return guard(ep, [&] {
    SY_HOLD(sy_endpoint, ep, sy::Kind::kEndpoint, "sy_endpoint_memory: ep");
    if (device_bytes) *device_bytes = ep->deviceBytes;
    if (local_bytes) *local_bytes = ep->localBytes;
  });
}

}  // extern "C"
