// class Runtime: one process's NVSHMEM runtime. new Runtime(uniqueId, rank, ranks, device) is
// collective (every rank at once); an optional 5th argument carries the runtime options; destroy() finalises NVSHMEM (collective too).
// With the bench library, bench/native/binding/bench.cc adds benchPeerWrite(bytes, iters) to its prototype.
#include "runtime.h"

#include "status.h"

namespace sy_node {

Napi::FunctionReference Runtime::constructor;

Napi::Object Runtime::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "Runtime",
                                 {InstanceMethod("info", &Runtime::Info), InstanceMethod("barrier", &Runtime::Barrier),
                                  InstanceMethod("destroy", &Runtime::Destroy)});
  constructor = Napi::Persistent(f);
  constructor.SuppressDestruct();
  exports.Set("Runtime", f);
  return exports;
}

Runtime::Runtime(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Runtime>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsTypedArray()) {
    throw Napi::TypeError::New(env, "new Runtime(uniqueId: Uint8Array, rank, ranks, device)");
  }
  Napi::Uint8Array id = info[0].As<Napi::Uint8Array>();
  if (id.ByteLength() != SY_UNIQUE_ID_BYTES) {
    throw Napi::RangeError::New(env, "Runtime: uniqueId must be " + std::to_string(SY_UNIQUE_ID_BYTES) + " bytes");
  }
  // Optional 5th argument { transport: "auto" | "put", pointerChecks: boolean, contiguousBlocks: number,
  // kernelPerHalf: boolean }.
  sy_runtime_options options;
  sy_runtime_options_init(&options);
  if (info.Length() >= 5 && info[4].IsObject()) {
    Napi::Object o = info[4].As<Napi::Object>();
    if (o.Has("transport")) options.transport = o.Get("transport").ToString().Utf8Value() == "put" ? SY_TRANSPORT_PUT : SY_TRANSPORT_AUTO;
    if (o.Has("pointerChecks")) options.pointer_checks = o.Get("pointerChecks").ToBoolean().Value() ? 1 : 0;
    if (o.Has("contiguousBlocks")) options.contiguous_blocks = o.Get("contiguousBlocks").ToNumber().Int32Value();
    if (o.Has("kernelPerHalf")) options.kernel_per_half = o.Get("kernelPerHalf").ToBoolean().Value() ? 1 : 0;
  }
  check(env,
        sy_runtime_create_with_options(id.Data(), info[1].As<Napi::Number>().Int32Value(),
                                       info[2].As<Napi::Number>().Int32Value(), info[3].As<Napi::Number>().Int32Value(),
                                       &options, &rt_),
        nullptr);
}

Runtime::~Runtime() {
  // Finalising NVSHMEM is collective: only destroy() does it, never the garbage collector.
}

sy_runtime* Runtime::Get(Napi::Env env) const {
  if (rt_ == nullptr) throw Napi::Error::New(env, "Runtime was destroyed");
  return rt_;
}

Napi::Value Runtime::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  sy_runtime_info ri{};
  check(env, sy_runtime_info_get(Get(env), &ri), rt_);
  Napi::Object o = Napi::Object::New(env);
  o.Set("rank", ri.rank);
  o.Set("ranks", ri.ranks);
  o.Set("device", ri.device);
  o.Set("nodeRanks", ri.node_ranks);
  o.Set("smCount", ri.sm_count);
  o.Set("directPeers", ri.direct_peers);
  o.Set("gpuShare", ri.gpu_share);
  return o;
}

Napi::Value Runtime::Barrier(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env, sy_barrier(Get(env), toPtr<void>(info[0], "stream")), rt_);
  return env.Undefined();
}

Napi::Value Runtime::Destroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (rt_ != nullptr) {
    sy_runtime* rt = rt_;
    rt_ = nullptr;
    const int rc = sy_runtime_destroy(rt);
    if (rc != SY_OK) throw makeError(env, rc, sy_last_error(rt), nullptr);
  }
  return env.Undefined();
}

}  // namespace sy_node
