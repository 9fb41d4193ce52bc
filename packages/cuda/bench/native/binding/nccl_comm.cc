// class Nccl: the NCCL communicator of the bench's baseline. new Nccl(uniqueId, rank, ranks, device)
// is collective (rank 0's ncclUniqueId(), relayed like NVSHMEM's); destroy() frees it.
#include "nccl_comm.h"

#include "bench.h"

namespace sy_node {

Napi::Object Nccl::Init(Napi::Env env, Napi::Object exports) {
  Napi::Function f = DefineClass(
      env, "Nccl", {InstanceMethod("version", &Nccl::Version), InstanceMethod("destroy", &Nccl::Destroy)});
  exports.Set("Nccl", f);
  return exports;
}

Nccl::Nccl(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Nccl>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsTypedArray()) {
    throw Napi::TypeError::New(env, "new Nccl(uniqueId: Uint8Array, rank, ranks, device)");
  }
  Napi::Uint8Array id = info[0].As<Napi::Uint8Array>();
  if (id.ByteLength() != SY_UNIQUE_ID_BYTES) {
    throw Napi::RangeError::New(env, "Nccl: uniqueId must be " + std::to_string(SY_UNIQUE_ID_BYTES) + " bytes");
  }
  checkBench(env,
        sy_nccl_create(id.Data(), info[1].As<Napi::Number>().Int32Value(), info[2].As<Napi::Number>().Int32Value(),
                       info[3].As<Napi::Number>().Int32Value(), &nc_),
        nullptr);
}

Nccl::~Nccl() {
  // Destroying a communicator is collective in spirit: only destroy() does it.
}

sy_nccl* Nccl::Get(Napi::Env env) const {
  if (nc_ == nullptr) throw makeError(env, SY_ERR_STATE, "Nccl was destroyed", nullptr);
  return nc_;
}

Napi::Value Nccl::Version(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int v = 0;
  checkBench(env, sy_nccl_version(Get(env), &v), nc_);
  return Napi::Number::New(env, v);
}

Napi::Value Nccl::Destroy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (nc_ != nullptr) {
    sy_nccl* nc = nc_;
    nc_ = nullptr;
    const int rc = sy_nccl_destroy(nc);
    if (rc != SY_OK) throw makeError(env, rc, sy_bench_last_error(nullptr), nullptr);
  }
  return env.Undefined();
}

}  // namespace sy_node
