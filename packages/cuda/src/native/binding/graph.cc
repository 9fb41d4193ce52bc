// class Graph: an instantiated CUDA graph from Stream.endCapture(); launch(streamHandle) replays it.
#include "graph.h"

#include "status.h"

namespace sy_node {

Napi::FunctionReference Graph::constructor;

Napi::Object Graph::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(
      env, "Graph", {InstanceMethod("launch", &Graph::Launch), InstanceMethod("destroy", &Graph::Destroy)});
  constructor = Napi::Persistent(f);
  constructor.SuppressDestruct();
  exports.Set("Graph", f);
  return exports;
}

Napi::Object Graph::Wrap(Napi::Env env, void* exec) {
  return constructor.New({fromPtr(env, exec)});
}

Graph::Graph(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Graph>(info) {
  exec_ = toPtr<void>(info[0], "exec");
}

Graph::~Graph() {
  if (exec_ != nullptr) sy_graph_destroy(exec_);
}

Napi::Value Graph::Launch(const Napi::CallbackInfo& info) {
  if (exec_ == nullptr) throw makeError(info.Env(), SY_ERR_STATE, "Graph was destroyed", nullptr);
  check(info.Env(), sy_graph_launch(exec_, toPtr<void>(info[0], "stream")), nullptr);
  return info.Env().Undefined();
}

Napi::Value Graph::Destroy(const Napi::CallbackInfo& info) {
  if (exec_ != nullptr) {
    void* e = exec_;
    exec_ = nullptr;
    check(info.Env(), sy_graph_destroy(e), nullptr);
  }
  return info.Env().Undefined();
}

}  // namespace sy_node
