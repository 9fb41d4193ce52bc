#pragma once
#include <napi.h>

#include "switchyard_bench.h"

namespace sy_node {

class Baseline : public Napi::ObjectWrap<Baseline> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  explicit Baseline(const Napi::CallbackInfo& info);
  ~Baseline() override;

 private:
  sy_baseline* Get(Napi::Env env) const;
  Napi::Value Dispatch(const Napi::CallbackInfo& info);
  Napi::Value Combine(const Napi::CallbackInfo& info);
  Napi::Value Region(const Napi::CallbackInfo& info);
  Napi::Value Counts(const Napi::CallbackInfo& info);
  Napi::Value Memory(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  sy_baseline* bl_ = nullptr;
  Napi::ObjectReference nccl_;
};

}  // namespace sy_node
