// Dynamic shared memory of the stage kernels' launches (launch.h): what a kernel may have on the
// current device, and its limit raised once, not at every launch.
#include <mutex>

#include "launch.h"

namespace sy {
namespace {

/// One (kernel, device)'s answers. Few kernels ask (a handful of stage kernels a build), so a
/// short table searched in order will do.
struct Known {
  const void* kernel;
  int device;
  int allowed;  // the largest limit set so far (0: none)
  bool looked;  // `room` below is known
  KernelRoom room;
};
constexpr int kKnown = 64;
Known known[kKnown];
int knownCount = 0;
std::mutex knownMu;

int currentDevice() {
  int device = 0;
  return cudaGetDevice(&device) == cudaSuccess ? device : 0;
}

/// The entry of (kernel, device), made on first use; null when the table is full (then nothing is
/// remembered and every call asks the runtime). Caller holds knownMu.
Known* entry(const void* kernel, int device) {
  for (int i = 0; i < knownCount; ++i) {
    if (known[i].kernel == kernel && known[i].device == device) return &known[i];
  }
  if (knownCount == kKnown) return nullptr;
  known[knownCount] = Known{kernel, device, 0, false, KernelRoom{-1, 0}};
  return &known[knownCount++];
}

KernelRoom lookRoom(const void* kernel, int device) {
  cudaFuncAttributes a{};
  int optin = 0;
  if (cudaFuncGetAttributes(&a, kernel) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    return KernelRoom{-1, 0};
  }
  return KernelRoom{optin - static_cast<int>(a.sharedSizeBytes), a.binaryVersion};
}

}  // namespace

KernelRoom kernelRoom(const void* kernel) {
  const int device = currentDevice();
  std::lock_guard<std::mutex> lock(knownMu);
  Known* k = entry(kernel, device);
  if (k == nullptr) return lookRoom(kernel, device);
  if (!k->looked) {
    k->room = lookRoom(kernel, device);
    k->looked = k->room.room >= 0;  // a failed look is tried again next time
  }
  return k->room;
}

void forgetSmem() {
  std::lock_guard<std::mutex> lock(knownMu);
  knownCount = 0;
}

cudaError_t allowSmem(const void* kernel, int bytes) {
  const int device = currentDevice();
  std::lock_guard<std::mutex> lock(knownMu);
  Known* k = entry(kernel, device);
  if (k != nullptr && bytes <= k->allowed) return cudaSuccess;
  const cudaError_t rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (rc == cudaSuccess && k != nullptr) k->allowed = bytes;
  return rc;
}

}  // namespace sy
