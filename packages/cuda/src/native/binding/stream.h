#pragma once
#include <napi.h>

namespace sy_node {

class Stream : public Napi::ObjectWrap<Stream> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  explicit Stream(const Napi::CallbackInfo& info);
  ~Stream() override;

 private:
  Napi::Value Handle(const Napi::CallbackInfo& info);
  Napi::Value Synchronize(const Napi::CallbackInfo& info);
  Napi::Value BeginCapture(const Napi::CallbackInfo& info);
  Napi::Value EndCapture(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  void* stream_ = nullptr;
};

}  // namespace sy_node
