#pragma once
#include <napi.h>

namespace sy_node {

class Event : public Napi::ObjectWrap<Event> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  explicit Event(const Napi::CallbackInfo& info);
  ~Event() override;
  void* Get() const { return event_; }

 private:
  Napi::Value Record(const Napi::CallbackInfo& info);
  Napi::Value ElapsedMs(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  void* event_ = nullptr;
};

}  // namespace sy_node
