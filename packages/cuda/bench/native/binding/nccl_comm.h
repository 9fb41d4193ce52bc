#pragma once
#include <napi.h>

#include "switchyard_bench.h"

namespace sy_node {

class Nccl : public Napi::ObjectWrap<Nccl> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  explicit Nccl(const Napi::CallbackInfo& info);
  ~Nccl() override;
  sy_nccl* Get(Napi::Env env) const;

 private:
  Napi::Value Version(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  sy_nccl* nc_ = nullptr;
};

}  // namespace sy_node
