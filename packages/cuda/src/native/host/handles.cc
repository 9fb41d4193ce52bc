#include "handles.h"

#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "status_error.h"

namespace sy {
namespace {

static_assert(sizeof(void*) == 8, "handles are 64-bit ids");

/// Handle values: a tag in the top 16 bits (a non-canonical address, never a real pointer) and an
/// id below it that is never reused.
constexpr uint64_t kTag = uint64_t{0x5359} << 48;
constexpr uint64_t kIdMask = (uint64_t{1} << 48) - 1;

struct Entry {
  Kind kind;
  std::shared_ptr<void> obj;
  int inFlight = 0;
  bool dying = false;
  std::string lastError;
};

struct Table {
  std::mutex mu;
  std::condition_variable idle;
  std::unordered_map<uint64_t, Entry> live;
  uint64_t next = 1;
};

Table& table() {
  static Table* t = new Table();  // never destroyed: calls may still arrive during process exit
  return *t;
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kRuntime: return "sy_runtime";
    case Kind::kEndpoint: return "sy_endpoint";
    case Kind::kNccl: return "sy_nccl";
    case Kind::kBaseline: return "sy_baseline";
  }
  return "unknown object";
}

uint64_t idOf(const void* h) {
  const uint64_t v = reinterpret_cast<uintptr_t>(h);
  return (v & ~kIdMask) == kTag ? (v & kIdMask) : 0;
}

/// The entry of `h` (a live or dying handle), under the table's lock; throws like acquireHandle.
Entry& entryOf(Table& t, const void* h, Kind kind, const char* what) {
  SY_REQUIRE(h != nullptr, what << " is NULL");
  const auto it = t.live.find(idOf(h));
  if (it == t.live.end() || idOf(h) == 0) {
    SY_THROW(SY_ERR_STATE, what << " (" << h << ") is not a live " << kindName(kind)
                                << ": it was destroyed, or was never created by this library");
  }
  SY_REQUIRE(it->second.kind == kind, what << " is a " << kindName(it->second.kind) << ", not a " << kindName(kind));
  if (it->second.dying) SY_THROW(SY_ERR_STATE, what << " (" << h << ") is being destroyed");
  return it->second;
}

}  // namespace

HandleRef::~HandleRef() {
  if (id_ == 0) return;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const auto it = t.live.find(id_);
  if (it != t.live.end() && --it->second.inFlight == 0) t.idle.notify_all();
}

void* registerHandle(Kind kind, std::shared_ptr<void> obj) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const uint64_t id = t.next++;
  Entry e;
  e.kind = kind;
  e.obj = std::move(obj);
  t.live.emplace(id, std::move(e));
  return reinterpret_cast<void*>(static_cast<uintptr_t>(kTag | id));
}

HandleRef acquireHandle(const void* h, Kind kind, const char* what) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  Entry& e = entryOf(t, h, kind, what);
  ++e.inFlight;
  return HandleRef(idOf(h), e.obj);
}

std::shared_ptr<void> retireHandle(const void* h, Kind kind, const char* what, const std::function<void(void*)>& abort,
                                   const std::function<void(void*)>& teardown, std::chrono::milliseconds wait) {
  Table& t = table();
  std::shared_ptr<void> obj;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    Entry& e = entryOf(t, h, kind, what);
    e.dying = true;
    obj = e.obj;
  }
  const uint64_t id = idOf(h);
  auto revive = [&] {
    std::lock_guard<std::mutex> lock(t.mu);
    t.live.at(id).dying = false;
  };
  if (abort) abort(obj.get());
  {
    std::unique_lock<std::mutex> lock(t.mu);
    if (!t.idle.wait_for(lock, wait, [&] { return t.live.at(id).inFlight == 0; })) {
      const int n = t.live.at(id).inFlight;
      t.live.at(id).dying = false;
      SY_THROW(SY_ERR_STATE, what << ": " << n << " call(s) on this " << kindName(kind) << " still running after "
                                  << wait.count() << " ms; the handle stays live: destroy it again once they return");
    }
  }
  try {
    if (teardown) teardown(obj.get());
  } catch (...) {
    revive();
    throw;
  }
  std::lock_guard<std::mutex> lock(t.mu);
  t.live.erase(id);
  return obj;
}

const char* handleError(const void* h) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const auto it = t.live.find(idOf(h));
  return it == t.live.end() || idOf(h) == 0 ? nullptr : it->second.lastError.c_str();
}

void setHandleError(const void* h, const std::string& message) {
  if (h == nullptr) return;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const auto it = t.live.find(idOf(h));
  if (it != t.live.end() && idOf(h) != 0) it->second.lastError = message;
}

}  // namespace sy
