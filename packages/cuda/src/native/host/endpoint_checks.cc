// What the four phases check before enqueueing anything (endpoint.cc calls these): the order of
// the calls within a step, and that every pointer is memory of this endpoint's GPU holding the
// bytes the call reads or writes. A refused call changes nothing, so the endpoint stays usable.
#include <cuda.h>  // CUdeviceptr, CUresult: cuMemGetAddressRange through cudart's driver entry point
#include <cuda_runtime.h>

#include <sstream>
#include <string>

#include "endpoint.h"
#include "error.h"

namespace sy {
namespace {

const char* const kCalls[6] = {"sy_dispatch_send", "sy_dispatch_recv",      "sy_combine_send",
                               "sy_combine_recv",  "sy_dispatch_recv_rows", "sy_dispatch_recv_into"};

using GetRangeFn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);

/// cuMemGetAddressRange (the allocation holding an address), or null where the driver has none.
GetRangeFn getRange() {
  static const GetRangeFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    const cudaError_t rc = cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &found);
#else
    const cudaError_t rc = cudaGetDriverEntryPoint("cuMemGetAddressRange", &f, cudaEnableDefault, &found);
#endif
    if (rc != cudaSuccess || found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<GetRangeFn>(nullptr);
    }
    return reinterpret_cast<GetRangeFn>(f);
  }();
  return fn;
}

}  // namespace

bool streamCapturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();  // not sticky; must not show up as the next launch's error
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

void enterPhase(sy_endpoint* ep, int call, bool capturing) {
  if (capturing && ep->exactOutput) {
    SY_THROW(SY_ERR_UNSUPPORTED, kCalls[call] << ": the endpoint has exact-size output, which synchronises the host "
                                                 "within the step: it cannot be captured into a graph (use "
                                                 "sy_endpoint_set_output(ep, 0), worst-case output, for graphs)");
  }
  if (capturing) ep->phaseChecks = false;
  // The rows of a step may be asked again until they are placed.
  const bool again = call == kRecvRows && ep->phase == kRecvInto;
  if (!ep->phaseChecks || ep->phase == call || again) return;
  std::ostringstream step;
  step << kCalls[kDispatchSend] << ", " << kCalls[kDispatchRecv] << ", "
       << (ep->exactOutput ? std::string(kCalls[kRecvRows]) + ", " + kCalls[kRecvInto] + ", " : std::string())
       << kCalls[kCombineSend] << ", " << kCalls[kCombineRecv];
  SY_THROW(SY_ERR_PHASE, kCalls[call] << ": called out of order: the endpoint's next call is " << kCalls[ep->phase]
                                      << " (a step is " << step.str() << ")");
}

void leavePhase(sy_endpoint* ep, int call) {
  switch (call) {
    case kDispatchRecv: ep->phase = ep->exactOutput ? kRecvRows : kCombineSend; break;
    case kRecvRows: ep->phase = kRecvInto; break;
    case kRecvInto: ep->phase = kCombineSend; break;
    case kCombineRecv: ep->phase = kDispatchSend; break;
    default: ep->phase = call + 1;
  }
}

void requireDevicePtr(const sy_endpoint* ep, const void* p, uint64_t bytes, unsigned align, const char* call,
                      const char* name, bool deep) {
  SY_REQUIRE(p != nullptr, call << ": " << name << " is NULL");
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  SY_REQUIRE(addr % align == 0, call << ": " << name << " (" << p << ") must be " << align << "-byte aligned");
  if (!deep) return;
  // Inside this endpoint's own symmetric heap: its extent is known without asking the driver.
  const uintptr_t heap = reinterpret_cast<uintptr_t>(ep->ctx.heap);
  if (heap != 0 && addr >= heap && addr < heap + ep->symmetricBytes) {
    SY_REQUIRE(bytes <= heap + ep->symmetricBytes - addr,
               call << ": " << name << " runs past the end of the endpoint's symmetric heap");
    return;
  }
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return;  // CUDA cannot say: do not refuse on a guess
  }
  switch (attr.type) {
    case cudaMemoryTypeUnregistered:
      SY_THROW(SY_ERR_INVALID_ARGUMENT, call << ": " << name << " (" << p
                                             << ") is not GPU memory: pageable host memory, or an address no "
                                                "allocation covers; pass device memory of GPU "
                                             << ep->rt->device);
    case cudaMemoryTypeHost:
      return;  // pinned host memory mapped for the GPU (zero-copy): allowed, its extent is not checked
    case cudaMemoryTypeDevice:
      SY_REQUIRE(attr.device == ep->rt->device, call << ": " << name << " (" << p << ") is memory of GPU "
                                                     << attr.device << ", this endpoint runs on GPU "
                                                     << ep->rt->device);
      break;
    default:
      break;  // managed memory: any GPU may touch it
  }
  if (const GetRangeFn range = getRange()) {
    CUdeviceptr base = 0;
    size_t size = 0;
    if (range(&base, &size, static_cast<CUdeviceptr>(addr)) == CUDA_SUCCESS) {
      const uint64_t left = static_cast<uint64_t>(base) + size - addr;
      SY_REQUIRE(bytes <= left, call << ": " << name << " (" << p << ") holds " << left
                                     << " bytes to the end of its allocation, the call needs " << bytes);
    } else {
      cudaGetLastError();
    }
  }
}

}  // namespace sy
