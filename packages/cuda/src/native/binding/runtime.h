#pragma once
#include <napi.h>

#include "switchyard_cuda.h"

namespace sy_node {

class Runtime : public Napi::ObjectWrap<Runtime> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  static Napi::FunctionReference constructor;
  explicit Runtime(const Napi::CallbackInfo& info);
  ~Runtime() override;
  sy_runtime* Get(Napi::Env env) const;

 private:
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value Barrier(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  sy_runtime* rt_ = nullptr;
};

}  // namespace sy_node
