#include "handles.h"

#include <mutex>
#include <unordered_set>

#include "baseline.h"
#include "endpoint.h"
#include "error.h"
#include "runtime.h"

namespace sy {
namespace {

std::mutex mu;
std::unordered_set<const void*>& handles() {
  static std::unordered_set<const void*> set;
  return set;
}

const char* kindOf(uint32_t magic) {
  switch (magic) {
    case kRuntimeMagic: return "sy_runtime";
    case kEndpointMagic: return "sy_endpoint";
    case kNcclMagic: return "sy_nccl";
    case kBaselineMagic: return "sy_baseline";
    default: return "unknown object";
  }
}

}  // namespace

void trackHandle(const void* h) {
  std::lock_guard<std::mutex> lock(mu);
  handles().insert(h);
}

void untrackHandle(const void* h) {
  std::lock_guard<std::mutex> lock(mu);
  handles().erase(h);
}

bool liveHandle(const void* h) {
  if (h == nullptr) return false;
  std::lock_guard<std::mutex> lock(mu);
  return handles().count(h) > 0;
}

void requireHandle(const void* h, uint32_t magic, const char* what) {
  SY_REQUIRE(h != nullptr, what << " is NULL");
  if (!liveHandle(h)) {
    SY_THROW(SY_ERR_STATE, what << " (" << h << ") is not a live " << kindOf(magic)
                                << ": it was destroyed, or was never created by this library");
  }
  const uint32_t got = *static_cast<const uint32_t*>(h);
  SY_REQUIRE(got == magic, what << " is a " << kindOf(got) << ", not a " << kindOf(magic));
}

}  // namespace sy
