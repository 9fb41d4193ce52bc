// Turns a C ABI status into a JavaScript Error with `code` (e.g. "SY_ERR_TIMEOUT"), `status`,
// and, for receive-stage failures, `info` {code, stage, peer, region, detail0, detail1}.
// The TypeScript layer (src/native/errors.ts) maps these onto core's named errors.
#pragma once
#include <napi.h>

#include <string>

#include "switchyard_cuda.h"

namespace sy_node {

/// The status's name for JavaScript (`err.code`); a value the ABI does not name reads as internal.
inline const char* statusName(int status) {
  const char* name = sy_status_name(status);
  return name != nullptr ? name : "SY_ERR_INTERNAL";
}

inline Napi::Error makeError(Napi::Env env, int status, const std::string& message, const sy_error_info* info) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, statusName(status)));
  err.Set("status", Napi::Number::New(env, status));
  if (info != nullptr && info->code != 0) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("code", info->code);
    o.Set("stage", info->stage);
    o.Set("peer", info->peer);
    o.Set("region", info->region);
    o.Set("detail0", info->detail0);
    o.Set("detail1", info->detail1);
    err.Set("info", o);
  }
  return err;
}

/// Throws (as a C++ exception node-addon-api turns into a JS throw) when `status` is not SY_OK.
inline void check(Napi::Env env, int status, const void* handle) {
  if (status != SY_OK) throw makeError(env, status, sy_last_error(handle), nullptr);
}

inline uint64_t toU64(const Napi::Value& v, const char* what) {
  if (v.IsBigInt()) {
    bool lossless = true;
    return v.As<Napi::BigInt>().Uint64Value(&lossless);
  }
  if (v.IsNumber()) return static_cast<uint64_t>(v.As<Napi::Number>().Int64Value());
  if (v.IsNull() || v.IsUndefined()) return 0;
  throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a bigint device address");
}

template <typename T>
inline T* toPtr(const Napi::Value& v, const char* what) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(toU64(v, what)));
}

inline Napi::BigInt fromPtr(Napi::Env env, const void* p) {
  return Napi::BigInt::New(env, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
}

}  // namespace sy_node
