#pragma once
#include <napi.h>

#include "switchyard_cuda.h"

namespace sy_node {

class Endpoint : public Napi::ObjectWrap<Endpoint> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  explicit Endpoint(const Napi::CallbackInfo& info);
  ~Endpoint() override;

 private:
  sy_endpoint* Get(Napi::Env env) const;
  Napi::Value Region(const Napi::CallbackInfo& info);
  Napi::Value Counts(const Napi::CallbackInfo& info);
  Napi::Value DispatchSend(const Napi::CallbackInfo& info);
  Napi::Value DispatchRecv(const Napi::CallbackInfo& info);
  Napi::Value CombineSend(const Napi::CallbackInfo& info);
  Napi::Value CombineRecv(const Napi::CallbackInfo& info);
  Napi::Value Dispatch(const Napi::CallbackInfo& info);
  Napi::Value Combine(const Napi::CallbackInfo& info);
  Napi::Value Check(const Napi::CallbackInfo& info);
  Napi::Value SetBlocks(const Napi::CallbackInfo& info);
  Napi::Value SetOutput(const Napi::CallbackInfo& info);
  Napi::Value RecvRows(const Napi::CallbackInfo& info);
  Napi::Value RecvInto(const Napi::CallbackInfo& info);
  Napi::Value Memory(const Napi::CallbackInfo& info);
  Napi::Value EnableStats(const Napi::CallbackInfo& info);
  Napi::Value Stats(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  sy_endpoint* ep_ = nullptr;
  Napi::ObjectReference runtime_;
};

}  // namespace sy_node
