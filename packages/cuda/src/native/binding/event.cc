// class Event: a CUDA event for timing. record(streamHandle, external) (external: a node of the
// graph being captured); start.elapsedMs(end) waits for `end` and returns milliseconds.
#include "event.h"

#include "status.h"

namespace sy_node {

Napi::Object Event::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(env, "Event",
                                 {InstanceMethod("record", &Event::Record), InstanceMethod("elapsedMs", &Event::ElapsedMs),
                                  InstanceMethod("destroy", &Event::Destroy)});
  exports.Set("Event", f);
  return exports;
}

Event::Event(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Event>(info) {
  check(info.Env(), sy_event_create(&event_), nullptr);
}

Event::~Event() {
  if (event_ != nullptr) sy_event_destroy(event_);
}

Napi::Value Event::Record(const Napi::CallbackInfo& info) {
  const bool external = info.Length() > 1 && info[1].ToBoolean().Value();
  check(info.Env(), sy_event_record(event_, toPtr<void>(info[0], "stream"), external ? 1 : 0), nullptr);
  return info.Env().Undefined();
}

Napi::Value Event::ElapsedMs(const Napi::CallbackInfo& info) {
  Event* end = Napi::ObjectWrap<Event>::Unwrap(info[0].As<Napi::Object>());
  float ms = 0;
  check(info.Env(), sy_event_elapsed_ms(event_, end->Get(), &ms), nullptr);
  return Napi::Number::New(info.Env(), ms);
}

Napi::Value Event::Destroy(const Napi::CallbackInfo& info) {
  if (event_ != nullptr) {
    void* e = event_;
    event_ = nullptr;
    check(info.Env(), sy_event_destroy(e), nullptr);
  }
  return info.Env().Undefined();
}

}  // namespace sy_node
