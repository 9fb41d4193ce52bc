// The handle table (src/native/host/handles.cc) with stand-in objects: stale handles stay refused
// when memory is reused, a double destroy never frees another object, and destroy waits for (or,
// past its bound, is refused by) a call in flight.
#include <atomic>
#include <chrono>
#include <memory>
#include <new>
#include <thread>

#include "../../../src/native/host/handles.h"
#include "../../../src/native/host/status_error.h"
#include "check.h"

namespace {

struct Fake {
  std::atomic<bool>* destroyed;
  ~Fake() { destroyed->store(true); }
};

int statusOf(const std::function<void()>& f) {
  try {
    f();
    return SY_OK;
  } catch (const sy::Error& e) {
    return e.status();
  }
}

int acquireStatus(const void* h, sy::Kind kind) {
  return statusOf([&] { sy::acquireHandle(h, kind, "test: h"); });
}

int destroyStatus(const void* h, std::chrono::milliseconds wait = sy::kDestroyWait) {
  return statusOf([&] { sy::retireHandle(h, sy::Kind::kEndpoint, "test: destroy", nullptr, nullptr, wait); });
}

/// A Fake in `storage` (the same address each time, as an allocator reusing memory gives).
std::shared_ptr<void> fakeAt(void* storage, std::atomic<bool>* flag) {
  return std::shared_ptr<Fake>(new (storage) Fake{flag}, [](Fake* f) { f->~Fake(); });
}

void staleHandles() {
  alignas(Fake) static unsigned char storage[sizeof(Fake)];
  std::atomic<bool> firstGone{false}, secondGone{false};
  void* first = sy::registerHandle(sy::Kind::kEndpoint, fakeAt(storage, &firstGone));
  CHECK(acquireStatus(first, sy::Kind::kEndpoint) == SY_OK, "a live handle is accepted");
  CHECK(acquireStatus(first, sy::Kind::kRuntime) == SY_ERR_INVALID_ARGUMENT, "a handle of another kind");
  CHECK(acquireStatus(nullptr, sy::Kind::kEndpoint) == SY_ERR_INVALID_ARGUMENT, "NULL");
  CHECK(destroyStatus(first) == SY_OK, "destroy");
  CHECK(firstGone.load(), "destroy frees the object");
  void* second = sy::registerHandle(sy::Kind::kEndpoint, fakeAt(storage, &secondGone));  // same memory
  CHECK(second != first, "a new object at the same address gets a new handle");
  CHECK(acquireStatus(first, sy::Kind::kEndpoint) == SY_ERR_STATE, "the stale handle is refused");
  CHECK(destroyStatus(first) == SY_ERR_STATE, "destroying the stale handle is refused");
  CHECK(!secondGone.load(), "destroying the stale handle leaves the new object alone");
  CHECK(acquireStatus(second, sy::Kind::kEndpoint) == SY_OK, "the new handle still works");
  CHECK(acquireStatus(storage, sy::Kind::kEndpoint) == SY_ERR_STATE, "the object's address is no handle");
  sy::setHandleError(second, "boom");
  CHECK(sy::handleError(second) != nullptr && std::string(sy::handleError(second)) == "boom", "last error kept");
  CHECK(destroyStatus(second) == SY_OK && secondGone.load(), "the new object is destroyed once");
  CHECK(sy::handleError(second) == nullptr, "a destroyed handle has no error slot");
}

void destroyWaitsForCallsInFlight() {
  std::atomic<bool> gone{false}, holding{false}, release{false}, sawAlive{false};
  void* h = sy::registerHandle(sy::Kind::kEndpoint, std::shared_ptr<Fake>(new Fake{&gone}));
  std::thread call([&] {
    const sy::HandleRef ref = sy::acquireHandle(h, sy::Kind::kEndpoint, "test: call");
    holding = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sawAlive = !gone.load() && ref.as<Fake>()->destroyed == &gone;  // the object outlives the destroy
  });
  while (!holding) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Past the bound: refused, and the handle is live again.
  CHECK(destroyStatus(h, std::chrono::milliseconds(50)) == SY_ERR_STATE, "destroy past its bound is refused");
  CHECK(!gone.load(), "a refused destroy frees nothing");
  CHECK(acquireStatus(h, sy::Kind::kEndpoint) == SY_OK, "after a refused destroy the handle is live");
  std::atomic<int> destroyed{-1};
  std::atomic<bool> aborted{false};
  std::thread destroyer([&] {
    destroyed = statusOf([&] {
      sy::retireHandle(h, sy::Kind::kEndpoint, "test: destroy", [&](void*) { aborted = true; }, nullptr);
    });
  });
  while (!aborted) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(acquireStatus(h, sy::Kind::kEndpoint) == SY_ERR_STATE, "a dying handle refuses new calls");
  CHECK(destroyed.load() == -1 && !gone.load(), "destroy waits for the call in flight");
  release = true;
  call.join();
  destroyer.join();
  CHECK(sawAlive.load(), "the call in flight saw its object alive");
  CHECK(destroyed.load() == SY_OK && gone.load(), "destroy finishes once the call returns");
  CHECK(destroyStatus(h) == SY_ERR_STATE, "a second destroy is refused");
}

void concurrentCalls() {
  std::atomic<bool> gone{false};
  void* h = sy::registerHandle(sy::Kind::kEndpoint, std::shared_ptr<Fake>(new Fake{&gone}));
  std::atomic<int> badAfterFree{0};
  std::thread callers[4];
  for (auto& t : callers) {
    t = std::thread([&] {
      for (int i = 0; i < 20000; ++i) {
        try {
          const sy::HandleRef ref = sy::acquireHandle(h, sy::Kind::kEndpoint, "test: call");
          if (gone.load()) ++badAfterFree;  // held, yet freed: a use after free
        } catch (const sy::Error&) {
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(destroyStatus(h) == SY_OK, "destroy among concurrent calls");
  for (auto& t : callers) t.join();
  CHECK(badAfterFree.load() == 0, "no call held a freed object");
}

}  // namespace

int main() {
  staleHandles();
  destroyWaitsForCallsInFlight();
  concurrentCalls();
  std::printf("handles_test: %d failure(s)\n", checkFailures());
  return checkFailures() == 0 ? 0 : 1;
}
