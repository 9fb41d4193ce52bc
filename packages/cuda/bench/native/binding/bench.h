// The Node addon's bench calls (linked against libswitchyard_cuda_bench.so; src/native/binding/addon.cc
// registers them when the addon is built with SY_WITH_BENCH).
#pragma once
#include <napi.h>

#include "status.h"
#include "switchyard_bench.h"

namespace sy_node {

/// Like check(), with the bench library's message (sy_bench_last_error).
inline void checkBench(Napi::Env env, int status, const void* handle) {
  if (status != SY_OK) throw makeError(env, status, sy_bench_last_error(handle), nullptr);
}

/// memInfo() -> {free, total}, fillRandom(ptr, count, kind, seed, stream), ncclUniqueId(), the classes
/// Nccl and Baseline, and runtime.benchPeerWrite(bytes, iters) -> GB/s on Runtime's prototype
/// (Runtime::Init must have run).
void InitBench(Napi::Env env, Napi::Object exports);

}  // namespace sy_node
