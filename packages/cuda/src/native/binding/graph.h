#pragma once
#include <napi.h>

namespace sy_node {

class Graph : public Napi::ObjectWrap<Graph> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports);
  /// Wraps an instantiated graph (cudaGraphExec_t) that the new object owns.
  static Napi::Object Wrap(Napi::Env env, void* exec);
  explicit Graph(const Napi::CallbackInfo& info);
  ~Graph() override;

 private:
  static Napi::FunctionReference constructor;
  Napi::Value Launch(const Napi::CallbackInfo& info);
  Napi::Value Destroy(const Napi::CallbackInfo& info);
  void* exec_ = nullptr;
};

}  // namespace sy_node
