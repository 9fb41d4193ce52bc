// The bench library's free functions for JavaScript (bench.h), and the classes of baseline.cc and
// nccl_comm.cc.
#include "bench.h"

#include "baseline.h"
#include "nccl_comm.h"
#include "runtime.h"

namespace sy_node {
namespace {

Napi::Value MemInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t free = 0, total = 0;
  checkBench(env, sy_mem_get_info(&free, &total), nullptr);
  Napi::Object o = Napi::Object::New(env);
  o.Set("free", Napi::Number::New(env, static_cast<double>(free)));
  o.Set("total", Napi::Number::New(env, static_cast<double>(total)));
  return o;
}

Napi::Value FillRandom(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uint64_t count = toU64(info[1], "count");
  const uint64_t seed = toU64(info[3], "seed");
  checkBench(env,
             sy_fill_random(toPtr<void>(info[0], "ptr"), count, info[2].As<Napi::Number>().Int32Value(), seed,
                            toPtr<void>(info[4], "stream")),
             nullptr);
  return env.Undefined();
}

Napi::Value NcclUniqueId(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array out = Napi::Uint8Array::New(env, SY_UNIQUE_ID_BYTES);
  checkBench(env, sy_nccl_get_unique_id(out.Data()), nullptr);
  return out;
}

/// runtime.benchPeerWrite(bytes, iters): `this` is a Runtime.
Napi::Value BenchPeerWrite(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info.This().IsObject()) throw Napi::TypeError::New(env, "benchPeerWrite: call it on a Runtime");
  Runtime* rt = Napi::ObjectWrap<Runtime>::Unwrap(info.This().As<Napi::Object>());
  double gbps = 0;
  checkBench(env,
             sy_bench_peer_write(rt->Get(env), static_cast<size_t>(info[0].As<Napi::Number>().Int64Value()),
                                 info[1].As<Napi::Number>().Int32Value(), &gbps),
             nullptr);
  return Napi::Number::New(env, gbps);
}

}  // namespace

void InitBench(Napi::Env env, Napi::Object exports) {
  Nccl::Init(env, exports);
  Baseline::Init(env, exports);
  exports.Set("memInfo", Napi::Function::New(env, MemInfo));
  exports.Set("fillRandom", Napi::Function::New(env, FillRandom));
  exports.Set("ncclUniqueId", Napi::Function::New(env, NcclUniqueId));
  Napi::Object proto = Runtime::constructor.Value().Get("prototype").As<Napi::Object>();
  proto.Set("benchPeerWrite", Napi::Function::New(env, BenchPeerWrite, "benchPeerWrite"));
}

}  // namespace sy_node
