// What every C ABI entry point (c_api.cc, c_api_bench.cc) runs its body inside: `guard` turns any
// exception into a status code and a message for sy_last_error(handle). Nothing escapes.
#pragma once
#include <cstdint>
#include <exception>
#include <string>

#include "baseline.h"
#include "endpoint.h"
#include "error.h"
#include "handles.h"
#include "runtime.h"

inline thread_local std::string tlsLastError;

/// The last-error slot of a live handle (told apart by its magic), else (NULL, destroyed, unknown) this thread's.
inline std::string* errorSlot(const void* handle) {
  if (sy::liveHandle(handle)) {
    const uint32_t magic = *static_cast<const uint32_t*>(handle);
    if (magic == 0x53595254) return &const_cast<sy_runtime*>(static_cast<const sy_runtime*>(handle))->lastError;
    if (magic == 0x53594550) return &const_cast<sy_endpoint*>(static_cast<const sy_endpoint*>(handle))->lastError;
    if (magic == kNcclMagic) return &const_cast<sy_nccl*>(static_cast<const sy_nccl*>(handle))->lastError;
    if (magic == kBaselineMagic) {
      return &const_cast<sy_baseline*>(static_cast<const sy_baseline*>(handle))->lastError;
    }
  }
  return &tlsLastError;
}

template <typename F>
int guard(const void* handle, F&& body) {
  try {
    body();
    return SY_OK;
  } catch (const sy::Error& e) {
    *errorSlot(handle) = e.what();
    tlsLastError = e.what();
    return e.status();
  } catch (const std::exception& e) {
    *errorSlot(handle) = std::string("internal error: ") + e.what();
    tlsLastError = *errorSlot(handle);
    return SY_ERR_INTERNAL;
  } catch (...) {
    *errorSlot(handle) = "internal error: unknown exception";
    tlsLastError = *errorSlot(handle);
    return SY_ERR_INTERNAL;
  }
}

/// An out-parameter or other pointer argument that must not be NULL (handles use SY_LIVE).
#define SY_HANDLE(h, what) SY_REQUIRE((h) != nullptr, what " is NULL")
