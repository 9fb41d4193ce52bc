// class DeviceBuffer: device memory owned by JavaScript. new DeviceBuffer(bytes); .ptr (bigint),
// .bytes; free() releases it at once (the garbage collector frees it otherwise).
#include "device_buffer.h"

#include "status.h"

namespace sy_node {

Napi::Object DeviceBuffer::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "DeviceBuffer",
                                 {InstanceAccessor("ptr", &DeviceBuffer::Ptr, nullptr),
                                  InstanceAccessor("bytes", &DeviceBuffer::Bytes, nullptr),
                                  InstanceMethod("free", &DeviceBuffer::Free)});
  exports.Set("DeviceBuffer", f);
  return exports;
}

DeviceBuffer::DeviceBuffer(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DeviceBuffer>(info) {
  Napi::Env env = info.Env();
  const double n = info[0].As<Napi::Number>().DoubleValue();
  if (!(n >= 0)) throw Napi::RangeError::New(env, "DeviceBuffer: bytes must be >= 0");
  bytes_ = static_cast<size_t>(n);
  check(env, sy_device_alloc(bytes_, &ptr_), nullptr);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) sy_device_free(ptr_);
}

Napi::Value DeviceBuffer::Ptr(const Napi::CallbackInfo& info) {
  if (ptr_ == nullptr && bytes_ > 0) throw makeError(info.Env(), SY_ERR_STATE, "DeviceBuffer was freed", nullptr);
  return fromPtr(info.Env(), ptr_);
}

Napi::Value DeviceBuffer::Bytes(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(bytes_));
}

Napi::Value DeviceBuffer::Free(const Napi::CallbackInfo& info) {
  if (ptr_ != nullptr) {
    void* p = ptr_;
    ptr_ = nullptr;
    check(info.Env(), sy_device_free(p), nullptr);
  }
  bytes_ = 0;
  return info.Env().Undefined();
}

}  // namespace sy_node
