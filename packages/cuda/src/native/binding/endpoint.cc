// class Endpoint: one rank's buffers for one config and the four phases.
//   new Endpoint(runtime, params: BigUint64Array, symmetricBytes: bigint, timeoutNs: bigint)  (collective)
// Phases take device addresses as bigint and a stream (0n = default) and only enqueue work;
// check(stream) synchronises off the JavaScript thread and resolves, or rejects with the
// receive stage's timeout / protocol error. setBlocks(n): the contiguous layout's SM budget;
// memory(): {deviceBytes, localBytes} the endpoint allocated. Exact-size output (contiguous):
// setOutput(exact: boolean) between steps; recvRows(stream) synchronises off the JavaScript thread
// and resolves to the step's rows (or rejects as check does); recvInto(x, scales, stream) places them. enableStats() turns the per-peer
// counters on; stats(ranks, stream) synchronises and returns them: {dispatchSent, dispatchReceived,
// combineSent, combineReceived, dispatchWaitNs, combineWaitNs}, arrays of `ranks` numbers.
#include "endpoint.h"

#include <functional>
#include <utility>
#include <vector>

#include "runtime.h"
#include "status.h"

namespace sy_node {

namespace {

/// Runs a call that synchronises a stream off the JavaScript thread: resolves with its value
/// (undefined when it has none), or rejects with its status and the receive stage's details.
class WaitWorker : public Napi::AsyncWorker {
 public:
  using Call = std::function<int(sy_error_info*, uint64_t*)>;
  WaitWorker(Napi::Env env, sy_endpoint* ep, Call call, bool hasValue)
      : Napi::AsyncWorker(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        ep_(ep),
        call_(std::move(call)),
        hasValue_(hasValue) {}
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
    status_ = call_(&info_, &value_);
    if (status_ != SY_OK) message_ = sy_last_error(ep_);
  }
  void OnOK() override {
    if (status_ != SY_OK) {
      deferred_.Reject(makeError(Env(), status_, message_, &info_).Value());
    } else if (hasValue_) {
      deferred_.Resolve(Napi::Number::New(Env(), static_cast<double>(value_)));
    } else {
      deferred_.Resolve(Env().Undefined());
    }
  }

 private:
  Napi::Promise::Deferred deferred_;
  sy_endpoint* ep_;
  Call call_;
  bool hasValue_;
  int status_ = SY_OK;
  sy_error_info info_{};
  uint64_t value_ = 0;
  std::string message_;
};

Napi::Promise queue(Napi::Env env, sy_endpoint* ep, WaitWorker::Call call, bool hasValue) {
  auto* worker = new WaitWorker(env, ep, std::move(call), hasValue);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace

Napi::Object Endpoint::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f =
      DefineClass(env, "Endpoint",
                  {InstanceMethod("region", &Endpoint::Region), InstanceMethod("counts", &Endpoint::Counts),
                   InstanceMethod("dispatchSend", &Endpoint::DispatchSend),
                   InstanceMethod("dispatchRecv", &Endpoint::DispatchRecv),
                   InstanceMethod("combineSend", &Endpoint::CombineSend),
                   InstanceMethod("combineRecv", &Endpoint::CombineRecv),
                   InstanceMethod("dispatch", &Endpoint::Dispatch), InstanceMethod("combine", &Endpoint::Combine),
                   InstanceMethod("check", &Endpoint::Check),
                   InstanceMethod("setBlocks", &Endpoint::SetBlocks), InstanceMethod("memory", &Endpoint::Memory),
                   InstanceMethod("setOutput", &Endpoint::SetOutput), InstanceMethod("recvRows", &Endpoint::RecvRows),
                   InstanceMethod("recvInto", &Endpoint::RecvInto),
                   InstanceMethod("enableStats", &Endpoint::EnableStats), InstanceMethod("stats", &Endpoint::Stats),
                   InstanceMethod("destroy", &Endpoint::Destroy)});
  exports.Set("Endpoint", f);
  return exports;
}

Endpoint::Endpoint(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Endpoint>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsObject() || !info[1].IsTypedArray()) {
    throw Napi::TypeError::New(env, "new Endpoint(runtime, params: BigUint64Array, symmetricBytes, timeoutNs)");
  }
  Runtime* rt = Napi::ObjectWrap<Runtime>::Unwrap(info[0].As<Napi::Object>());
  Napi::TypedArray arr = info[1].As<Napi::TypedArray>();
  if (arr.TypedArrayType() != napi_biguint64_array) {
    throw Napi::TypeError::New(env, "Endpoint: params must be a BigUint64Array (core's layoutParams)");
  }
  Napi::BigUint64Array params = info[1].As<Napi::BigUint64Array>();
  const uint64_t symmetricBytes = toU64(info[2], "symmetricBytes");
  const uint64_t timeoutNs = toU64(info[3], "timeoutNs");
  sy_runtime* r = rt->Get(env);
  check(env, sy_endpoint_create(r, params.Data(), params.ElementLength(), symmetricBytes, timeoutNs, &ep_), r);
  runtime_ = Napi::Persistent(info[0].As<Napi::Object>());
}

Endpoint::~Endpoint() {
  // Freeing the symmetric heap is collective: only destroy() does it, never the garbage collector.
}

sy_endpoint* Endpoint::Get(Napi::Env env) const {
  if (ep_ == nullptr) throw makeError(env, SY_ERR_STATE, "Endpoint was destroyed", nullptr);
  return ep_;
}

Napi::Value Endpoint::Region(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* ptr = nullptr;
  uint64_t bytes = 0;
  check(env, sy_endpoint_region(Get(env), info[0].As<Napi::Number>().Int32Value(), &ptr, &bytes), ep_);
  Napi::Object o = Napi::Object::New(env);
  o.Set("ptr", fromPtr(env, ptr));
  o.Set("bytes", Napi::Number::New(env, static_cast<double>(bytes)));
  return o;
}

Napi::Value Endpoint::Counts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int32_t* counts = nullptr;
  check(env, sy_endpoint_counts(Get(env), &counts), ep_);
  return fromPtr(env, counts);
}

Napi::Value Endpoint::DispatchSend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env,
        sy_dispatch_send(Get(env), toPtr<const void>(info[0], "x"), toPtr<const float>(info[1], "scales"),
                         toPtr<const int32_t>(info[2], "topkIdx"), toPtr<const float>(info[3], "topkWeights"),
                         info[4].As<Napi::Number>().Int32Value(), toPtr<void>(info[5], "stream")),
        ep_);
  return env.Undefined();
}

Napi::Value Endpoint::DispatchRecv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env, sy_dispatch_recv(Get(env), toPtr<void>(info[0], "stream")), ep_);
  return env.Undefined();
}

Napi::Value Endpoint::CombineSend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env, sy_combine_send(Get(env), toPtr<const void>(info[0], "expertOut"), toPtr<void>(info[1], "stream")), ep_);
  return env.Undefined();
}

Napi::Value Endpoint::CombineRecv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env,
        sy_combine_recv(Get(env), toPtr<const int32_t>(info[0], "topkIdx"), toPtr<const float>(info[1], "topkWeights"),
                        info[2].As<Napi::Number>().Int32Value(), toPtr<void>(info[3], "y"),
                        toPtr<void>(info[4], "stream")),
        ep_);
  return env.Undefined();
}

Napi::Value Endpoint::Dispatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env,
        sy_dispatch(Get(env), toPtr<const void>(info[0], "x"), toPtr<const float>(info[1], "scales"),
                    toPtr<const int32_t>(info[2], "topkIdx"), toPtr<const float>(info[3], "topkWeights"),
                    info[4].As<Napi::Number>().Int32Value(), toPtr<void>(info[5], "stream")),
        ep_);
  return env.Undefined();
}

Napi::Value Endpoint::Combine(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env,
        sy_combine(Get(env), toPtr<const void>(info[0], "expertOut"), toPtr<const int32_t>(info[1], "topkIdx"),
                   toPtr<const float>(info[2], "topkWeights"), info[3].As<Napi::Number>().Int32Value(),
                   toPtr<void>(info[4], "y"), toPtr<void>(info[5], "stream")),
        ep_);
  return env.Undefined();
}

Napi::Value Endpoint::Check(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  sy_endpoint* ep = Get(env);
  void* stream = toPtr<void>(info[0], "stream");
  return queue(env, ep, [ep, stream](sy_error_info* e, uint64_t*) { return sy_endpoint_check(ep, stream, e); }, false);
}

Napi::Value Endpoint::SetBlocks(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env, sy_endpoint_set_blocks(Get(env), info[0].As<Napi::Number>().Int32Value()), ep_);
  return env.Undefined();
}

Napi::Value Endpoint::SetOutput(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env, sy_endpoint_set_output(Get(env), info[0].ToBoolean().Value() ? 1 : 0), ep_);
  return env.Undefined();
}

Napi::Value Endpoint::RecvRows(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  sy_endpoint* ep = Get(env);
  void* stream = toPtr<void>(info[0], "stream");
  return queue(
      env, ep, [ep, stream](sy_error_info* e, uint64_t* rows) { return sy_dispatch_recv_rows(ep, stream, rows, e); },
      true);
}

Napi::Value Endpoint::RecvInto(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env,
        sy_dispatch_recv_into(Get(env), toPtr<void>(info[0], "x"), toPtr<float>(info[1], "scales"),
                              toPtr<void>(info[2], "stream")),
        ep_);
  return env.Undefined();
}

Napi::Value Endpoint::Memory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t device = 0, local = 0;
  check(env, sy_endpoint_memory(Get(env), &device, &local), ep_);
  Napi::Object o = Napi::Object::New(env);
  o.Set("deviceBytes", Napi::Number::New(env, static_cast<double>(device)));
  o.Set("localBytes", Napi::Number::New(env, static_cast<double>(local)));
  return o;
}

Napi::Value Endpoint::EnableStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  check(env, sy_endpoint_enable_stats(Get(env)), ep_);
  return env.Undefined();
}

namespace {

template <typename T>
Napi::Array toArray(Napi::Env env, const std::vector<T>& v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); ++i) a.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(v[i])));
  return a;
}

}  // namespace

Napi::Value Endpoint::Stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t ranks = static_cast<size_t>(info[0].As<Napi::Number>().Int64Value());
  std::vector<uint32_t> dSent(ranks), dRecv(ranks), cSent(ranks), cRecv(ranks);
  std::vector<uint64_t> dWait(ranks), cWait(ranks);
  check(env,
        sy_endpoint_stats(Get(env), toPtr<void>(info[1], "stream"), ranks, dSent.data(), dRecv.data(), cSent.data(),
                          cRecv.data(), dWait.data(), cWait.data()),
        ep_);
  Napi::Object o = Napi::Object::New(env);
  o.Set("dispatchSent", toArray(env, dSent));
  o.Set("dispatchReceived", toArray(env, dRecv));
  o.Set("combineSent", toArray(env, cSent));
  o.Set("combineReceived", toArray(env, cRecv));
  o.Set("dispatchWaitNs", toArray(env, dWait));
  o.Set("combineWaitNs", toArray(env, cWait));
  return o;
}

Napi::Value Endpoint::Destroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (ep_ != nullptr) {
    sy_endpoint* ep = ep_;
    ep_ = nullptr;
    runtime_.Reset();  // held so the runtime outlives the endpoint; a destroyed one needs it no more
    const int rc = sy_endpoint_destroy(ep);
    if (rc != SY_OK) throw makeError(env, rc, sy_last_error(nullptr), nullptr);
  }
  return env.Undefined();
}

}  // namespace sy_node
