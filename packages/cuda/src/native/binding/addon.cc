// Module entry: registers the wrapped classes (one per file) and the free functions
// version(), paramNames(), getUniqueId(), copyToDevice(ptr, view), copyToHost(view, ptr), memset(ptr, value, bytes),
// and, with the bench library (SY_WITH_BENCH, bench/native/binding/bench.cc), its calls: memInfo(), fillRandom(...),
// ncclUniqueId(), the classes Nccl and Baseline, Runtime's benchPeerWrite().
#include <napi.h>

#include "device_buffer.h"
#include "endpoint.h"
#include "event.h"
#include "graph.h"
#include "runtime.h"
#include "status.h"
#include "stream.h"
#if SY_WITH_BENCH
#include "bench.h"
#endif

namespace sy_node {
namespace {

Napi::Value Version(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), sy_version()); }

Napi::Value ParamNames(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), sy_param_names()); }

Napi::Value GetUniqueId(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array out = Napi::Uint8Array::New(env, SY_UNIQUE_ID_BYTES);
  check(env, sy_get_unique_id(out.Data()), nullptr);
  return out;
}

Napi::TypedArray viewOf(const Napi::Value& v, const char* what) {
  if (!v.IsTypedArray()) throw Napi::TypeError::New(v.Env(), std::string(what) + " must be a typed array");
  return v.As<Napi::TypedArray>();
}

uint8_t* viewData(const Napi::TypedArray& t) {
  return static_cast<uint8_t*>(t.ArrayBuffer().Data()) + t.ByteOffset();
}

Napi::Value CopyToDevice(const Napi::CallbackInfo& info) {
  Napi::TypedArray src = viewOf(info[1], "copyToDevice: source");
  check(info.Env(), sy_memcpy_to_device(toPtr<void>(info[0], "ptr"), viewData(src), src.ByteLength()), nullptr);
  return info.Env().Undefined();
}

Napi::Value CopyToHost(const Napi::CallbackInfo& info) {
  Napi::TypedArray dst = viewOf(info[0], "copyToHost: destination");
  check(info.Env(), sy_memcpy_to_host(viewData(dst), toPtr<const void>(info[1], "ptr"), dst.ByteLength()), nullptr);
  return info.Env().Undefined();
}

Napi::Value Memset(const Napi::CallbackInfo& info) {
  check(info.Env(),
        sy_memset_device(toPtr<void>(info[0], "ptr"), info[1].As<Napi::Number>().Int32Value(),
                         static_cast<size_t>(info[2].As<Napi::Number>().Int64Value())),
        nullptr);
  return info.Env().Undefined();
}

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  Runtime::Init(env, exports);
  Endpoint::Init(env, exports);
  DeviceBuffer::Init(env, exports);
  Stream::Init(env, exports);
  Graph::Init(env, exports);
  Event::Init(env, exports);
  exports.Set("version", Napi::Function::New(env, Version));
  exports.Set("paramNames", Napi::Function::New(env, ParamNames));
  exports.Set("getUniqueId", Napi::Function::New(env, GetUniqueId));
  exports.Set("copyToDevice", Napi::Function::New(env, CopyToDevice));
  exports.Set("copyToHost", Napi::Function::New(env, CopyToHost));
  exports.Set("memset", Napi::Function::New(env, Memset));
#if SY_WITH_BENCH
  InitBench(env, exports);
#endif
  return exports;
}

}  // namespace sy_node

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return sy_node::Init(env, exports); }

NODE_API_MODULE(switchyard_cuda, InitModule)
