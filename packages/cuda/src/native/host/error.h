// Errors of the host core: exceptions carrying a status and "file:line: what failed". They are
// caught at the C ABI (c_api.cc) and turned into a status plus sy_last_error's message.
#pragma once
#include <cuda_runtime.h>

#include "status_error.h"

namespace sy {

/// A CUDA call whose failure is handled by its caller (reported, refused, or of no consequence in
/// teardown): its error is taken out of this thread's last-error slot so that no later launch
/// reports it as its own.
inline void ignoreCuda(cudaError_t rc) {
  if (rc != cudaSuccess) cudaGetLastError();
}

/// Errors CUDA documents as leaving the context unusable ("any further CUDA work will return the
/// same error"). Ones missing here still surface: the launch itself fails with them again.
inline bool stickyCudaError(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
      return true;
    default:
      return false;
  }
}

}  // namespace sy

// A failed CUDA call also leaves its error in the runtime's per-thread last-error slot, and every
// kernel launch here reports cudaGetLastError(): an error already reported as this call's status
// must leave the slot, or the next good launch fails with it (an sy_graph_end_capture without a
// capture once failed the next sy_dispatch_send with cudaErrorIllegalState). A sticky error stays
// anyway: the next call that touches the context returns it again.
#define SY_CHECK_CUDA(expr)                                                                      \
  do {                                                                                           \
    cudaError_t sy_err_ = (expr);                                                                \
    if (sy_err_ != cudaSuccess) {                                                                \
      sy::ignoreCuda(sy_err_);                                                                   \
      SY_THROW(SY_ERR_CUDA, #expr << " failed: " << cudaGetErrorName(sy_err_) << " ("            \
                                  << cudaGetErrorString(sy_err_) << ")");                        \
    }                                                                                            \
  } while (0)


namespace sy {

/// Right before a launch whose status is read with cudaGetLastError(). A non-sticky error left in
/// this thread's slot belongs to some earlier call (ours or the caller's own CUDA code), not to
/// this launch: dropped. A sticky one means no launch can succeed: reported as SY_ERR_CUDA.
inline void clearStaleError(const char* call) {
  const cudaError_t stale = cudaPeekAtLastError();
  if (stale == cudaSuccess) return;
  if (stickyCudaError(stale)) {
    SY_THROW(SY_ERR_CUDA, call << ": the GPU context is unusable after an earlier error: " << cudaGetErrorName(stale)
                               << " (" << cudaGetErrorString(stale) << "); restart the process");
  }
  cudaGetLastError();
}

}  // namespace sy
