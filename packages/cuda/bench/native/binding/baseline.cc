// class Baseline: one rank's NCCL baseline for one config (the bench's "plain way").
//   new Baseline(nccl, params: BigUint64Array)  params = core's layoutParams of the contiguous layout
//   dispatch(x, scales, topkIdx, numTokens, stream)   blocks the JavaScript thread for the count exchange
//   combine(expertOut, topkIdx, topkWeights, numTokens, y, stream)
//   region(index) -> {ptr, bytes} (recvX, recvScales, recvMeta), counts() -> device address, memory() -> bytes
#include "baseline.h"

#include "bench.h"
#include "nccl_comm.h"

namespace sy_node {

Napi::Object Baseline::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f =
      DefineClass(env, "Baseline",
                  {InstanceMethod("dispatch", &Baseline::Dispatch), InstanceMethod("combine", &Baseline::Combine),
                   InstanceMethod("region", &Baseline::Region), InstanceMethod("counts", &Baseline::Counts),
                   InstanceMethod("memory", &Baseline::Memory), InstanceMethod("destroy", &Baseline::Destroy)});
  exports.Set("Baseline", f);
  return exports;
}

Baseline::Baseline(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Baseline>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsObject() || !info[1].IsTypedArray() ||
      info[1].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array) {
    throw Napi::TypeError::New(env, "new Baseline(nccl, params: BigUint64Array)");
  }
  Nccl* nc = Napi::ObjectWrap<Nccl>::Unwrap(info[0].As<Napi::Object>());
  Napi::BigUint64Array params = info[1].As<Napi::BigUint64Array>();
  sy_nccl* n = nc->Get(env);
  checkBench(env, sy_baseline_create(n, params.Data(), params.ElementLength(), &bl_), n);
  nccl_ = Napi::Persistent(info[0].As<Napi::Object>());
}

Baseline::~Baseline() {
  if (bl_ != nullptr) sy_baseline_destroy(bl_);
}

sy_baseline* Baseline::Get(Napi::Env env) const {
  if (bl_ == nullptr) throw makeError(env, SY_ERR_STATE, "Baseline was destroyed", nullptr);
  return bl_;
}

Napi::Value Baseline::Dispatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  checkBench(env,
        sy_baseline_dispatch(Get(env), toPtr<const void>(info[0], "x"), toPtr<const float>(info[1], "scales"),
                             toPtr<const int32_t>(info[2], "topkIdx"), info[3].As<Napi::Number>().Int32Value(),
                             toPtr<void>(info[4], "stream")),
        bl_);
  return env.Undefined();
}

Napi::Value Baseline::Combine(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  checkBench(env,
        sy_baseline_combine(Get(env), toPtr<const void>(info[0], "expertOut"), toPtr<const int32_t>(info[1], "topkIdx"),
                            toPtr<const float>(info[2], "topkWeights"), info[3].As<Napi::Number>().Int32Value(),
                            toPtr<void>(info[4], "y"), toPtr<void>(info[5], "stream")),
        bl_);
  return env.Undefined();
}

Napi::Value Baseline::Region(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* ptr = nullptr;
  uint64_t bytes = 0;
  checkBench(env, sy_baseline_region(Get(env), info[0].As<Napi::Number>().Int32Value(), &ptr, &bytes), bl_);
  Napi::Object o = Napi::Object::New(env);
  o.Set("ptr", fromPtr(env, ptr));
  o.Set("bytes", Napi::Number::New(env, static_cast<double>(bytes)));
  return o;
}

Napi::Value Baseline::Counts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int32_t* counts = nullptr;
  checkBench(env, sy_baseline_counts(Get(env), &counts), bl_);
  return fromPtr(env, counts);
}

Napi::Value Baseline::Memory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t bytes = 0;
  checkBench(env, sy_baseline_memory(Get(env), &bytes), bl_);
  return Napi::Number::New(env, static_cast<double>(bytes));
}

Napi::Value Baseline::Destroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (bl_ != nullptr) {
    sy_baseline* bl = bl_;
    bl_ = nullptr;
    const int rc = sy_baseline_destroy(bl);
    if (rc != SY_OK) throw makeError(env, rc, sy_bench_last_error(nullptr), nullptr);
  }
  return env.Undefined();
}

}  // namespace sy_node
