// class Stream: a non-blocking CUDA stream. .handle (bigint) goes to the phases; beginCapture /
// endCapture turn what was enqueued in between into a Graph (see graph.cc).
#include "stream.h"

#include "graph.h"
#include "status.h"

namespace sy_node {

Napi::Object Stream::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(
      env, "Stream",
      {InstanceAccessor("handle", &Stream::Handle, nullptr), InstanceMethod("synchronize", &Stream::Synchronize),
       InstanceMethod("beginCapture", &Stream::BeginCapture), InstanceMethod("endCapture", &Stream::EndCapture),
       InstanceMethod("destroy", &Stream::Destroy)});
  exports.Set("Stream", f);
  return exports;
}

Stream::Stream(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Stream>(info) {
  check(info.Env(), sy_stream_create(&stream_), nullptr);
}

Stream::~Stream() {
  if (stream_ != nullptr) sy_stream_destroy(stream_);
}

Napi::Value Stream::Handle(const Napi::CallbackInfo& info) {
  if (stream_ == nullptr) throw makeError(info.Env(), SY_ERR_STATE, "Stream was destroyed", nullptr);
  return fromPtr(info.Env(), stream_);
}

Napi::Value Stream::Synchronize(const Napi::CallbackInfo& info) {
  check(info.Env(), sy_stream_synchronize(stream_), nullptr);
  return info.Env().Undefined();
}

Napi::Value Stream::BeginCapture(const Napi::CallbackInfo& info) {
  check(info.Env(), sy_graph_begin_capture(stream_), nullptr);
  return info.Env().Undefined();
}

Napi::Value Stream::EndCapture(const Napi::CallbackInfo& info) {
  void* exec = nullptr;
  check(info.Env(), sy_graph_end_capture(stream_, &exec), nullptr);
  return Graph::Wrap(info.Env(), exec);
}

Napi::Value Stream::Destroy(const Napi::CallbackInfo& info) {
  if (stream_ != nullptr) {
    void* s = stream_;
    stream_ = nullptr;
    check(info.Env(), sy_stream_destroy(s), nullptr);
  }
  return info.Env().Undefined();
}

}  // namespace sy_node
