// What every C ABI entry point runs its body inside (c_api.cc, c_api_options.cc; the bench library's
// bench/native/host/c_api_bench.cc compiles its own copy): `guard` turns any exception into a
// status code and a message for the library's last-error call. Nothing escapes.
#pragma once
#include <cstdint>
#include <exception>
#include <string>

#include "error.h"
#include "handles.h"

/// This thread's last failure in this library (sy_last_error(NULL), and any handle not live).
inline thread_local std::string tlsLastError;

template <typename F>
int guard(const void* handle, F&& body) {
  try {
    body();
    return SY_OK;
  } catch (const sy::Error& e) {
    tlsLastError = e.what();
    sy::setHandleError(handle, tlsLastError);
    return e.status();
  } catch (const std::exception& e) {
    tlsLastError = std::string("internal error: ") + e.what();
    sy::setHandleError(handle, tlsLastError);
    return SY_ERR_INTERNAL;
  } catch (...) {
    tlsLastError = "internal error: unknown exception";
    sy::setHandleError(handle, tlsLastError);
    return SY_ERR_INTERNAL;
  }
}

/// An out-parameter or other pointer argument that must not be NULL (handles use SY_HOLD).
#define SY_HANDLE(h, what) SY_REQUIRE((h) != nullptr, what " is NULL")
