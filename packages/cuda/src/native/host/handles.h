// The handles this library hands out, host only (no CUDA: test/native/host/handles_test.cc runs it
// on a CPU). A handle is an opaque value, not the object's address: a 64-bit id the process never
// reuses, in a table of live objects. So a destroyed handle stays refused even when the allocator
// gives its memory to a new object, and destroying it twice never touches another object.
//
// Every C ABI call holds a HandleRef for its whole body: the object's in-flight count. Destroy
// marks the handle dying (new calls are refused with SY_ERR_STATE), runs the object's abort (so
// a call waiting on the device leaves), waits up to a bound for the calls in flight to return,
// and only then tears the object down. A destroy whose wait runs out is refused with SY_ERR_STATE
// and the handle is live again (destroy it again once those calls have returned).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace sy {

/// What a handle names. kRuntime and kEndpoint are this library's; kNccl and kBaseline are the bench
/// library's (bench/native), which compiles its own table from this file.
enum class Kind : uint32_t { kRuntime = 1, kEndpoint, kNccl, kBaseline };

/// How long a destroy waits for calls in flight on its handle.
constexpr std::chrono::milliseconds kDestroyWait{10000};

/// A call's hold on a live object: the object and its memory stay until the last one is gone.
class HandleRef {
 public:
  HandleRef(uint64_t id, std::shared_ptr<void> obj) : id_(id), obj_(std::move(obj)) {}
  HandleRef(HandleRef&& o) noexcept : id_(o.id_), obj_(std::move(o.obj_)) { o.id_ = 0; }
  HandleRef(const HandleRef&) = delete;
  HandleRef& operator=(const HandleRef&) = delete;
  HandleRef& operator=(HandleRef&&) = delete;
  ~HandleRef();
  template <typename T>
  T* as() const {
    return static_cast<T*>(obj_.get());
  }

 private:
  uint64_t id_;
  std::shared_ptr<void> obj_;
};

/// Registers `obj` (owned from now on) and returns its new handle.
void* registerHandle(Kind kind, std::shared_ptr<void> obj);
/// Holds a live handle of `kind` for the caller's call. Throws SY_ERR_INVALID_ARGUMENT for NULL or a
/// live handle of another kind, SY_ERR_STATE for one destroyed (or dying, or never made here).
HandleRef acquireHandle(const void* h, Kind kind, const char* what);
/// Destroys a handle as described above: `abort` runs once the handle is dying, before the wait;
/// `teardown` after it, with no call in flight (if it throws, the handle is live again). Returns the
/// object, which nothing else holds any more.
std::shared_ptr<void> retireHandle(const void* h, Kind kind, const char* what, const std::function<void(void*)>& abort,
                                   const std::function<void(void*)>& teardown,
                                   std::chrono::milliseconds wait = kDestroyWait);

/// The last error recorded on a registered handle (sy_last_error), or NULL for any other value.
const char* handleError(const void* h);
/// Records `message` as the handle's last error; no effect unless `h` is registered.
void setHandleError(const void* h, const std::string& message);

}  // namespace sy

/// Holds handle `h` (a parameter of the ABI function) for the rest of the scope; from here on `h`
/// names the object (a T*), not the handle.
#define SY_HOLD(T, h, kind, what)                                           \
  const sy::HandleRef h##Ref_ = sy::acquireHandle((h), (kind), (what)); \
  T* const h = h##Ref_.as<T>()
