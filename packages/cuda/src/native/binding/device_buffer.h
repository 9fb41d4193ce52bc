#pragma once
#include <napi.h>

namespace sy_node {

class DeviceBuffer : public Napi::ObjectWrap<DeviceBuffer> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  explicit DeviceBuffer(const Napi::CallbackInfo& info);
  ~DeviceBuffer() override;

 private:
  Napi::Value Ptr(const Napi::CallbackInfo& info);
  Napi::Value Bytes(const Napi::CallbackInfo& info);
  Napi::Value Free(const Napi::CallbackInfo& info);
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace sy_node
