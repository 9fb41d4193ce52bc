// C ABI fuzzer, the bench library's calls (bench/native/include/switchyard_bench.h): NULL and
// never-created handles and bad helper arguments (no GPU needed), and the peer-write bench's
// arguments on a live runtime. Every refusal's message comes from sy_bench_last_error.
#include <cstring>

#include "abi_fuzz_world.h"
#include "switchyard_bench.h"

namespace syfuzz {
namespace {

constexpr int INV = SY_ERR_INVALID_ARGUMENT, STATE = SY_ERR_STATE;

/// expect() with the bench library's messages.
bool expectBench(Fuzz& f, const char* call, const std::string& what, int want, int got, const void* handle = nullptr) {
  return f.expect(call, what, want, got, handle, sy_bench_last_error);
}

}  // namespace

void benchCases(Fuzz& f, bool gpu) {
  f.check("sy_bench_last_error", "NULL handle gives a string", sy_bench_last_error(nullptr) != nullptr);
  uint8_t id[SY_UNIQUE_ID_BYTES] = {};
  uint64_t params[SY_PARAM_COUNT] = {};
  void* p = nullptr;
  uint64_t n = 0;
  const int32_t* counts = nullptr;
  double gbps = 0;
  int version = 0;
  expectBench(f, "sy_bench_peer_write", "rt NULL", INV, sy_bench_peer_write(nullptr, 16, 1, &gbps));
  expectBench(f, "sy_nccl_get_unique_id", "out NULL", INV, sy_nccl_get_unique_id(nullptr));
  expectBench(f, "sy_nccl_create", "out NULL", INV, sy_nccl_create(id, 0, 1, 0, nullptr));
  expectBench(f, "sy_nccl_version", "nc NULL", INV, sy_nccl_version(nullptr, &version));
  expectBench(f, "sy_nccl_destroy", "nc NULL (no-op)", SY_OK, sy_nccl_destroy(nullptr));
  expectBench(f, "sy_baseline_create", "nc NULL", INV, sy_baseline_create(nullptr, params, SY_PARAM_COUNT, nullptr));
  expectBench(f, "sy_baseline_destroy", "bl NULL (no-op)", SY_OK, sy_baseline_destroy(nullptr));
  expectBench(f, "sy_baseline_dispatch", "bl NULL", INV,
              sy_baseline_dispatch(nullptr, nullptr, nullptr, nullptr, 0, nullptr));
  expectBench(f, "sy_baseline_combine", "bl NULL", INV,
              sy_baseline_combine(nullptr, nullptr, nullptr, nullptr, 0, nullptr, nullptr));
  expectBench(f, "sy_baseline_region", "bl NULL", INV, sy_baseline_region(nullptr, 7, &p, &n));
  expectBench(f, "sy_baseline_counts", "bl NULL", INV, sy_baseline_counts(nullptr, &counts));
  expectBench(f, "sy_baseline_memory", "bl NULL", INV, sy_baseline_memory(nullptr, &n));

  // Handles never made, with each kind's magic in place (and a runtime the product never made):
  // refused without a read past them.
  alignas(16) static uint8_t fakeRt[4096], fakeNc[4096], fakeBl[4096];
  const uint32_t magics[3] = {0x53595254u, 0x53594e43u, 0x5359424cu};
  uint8_t* fakes[3] = {fakeRt, fakeNc, fakeBl};
  for (int i = 0; i < 3; ++i) std::memcpy(fakes[i], &magics[i], 4);
  auto* frt = reinterpret_cast<sy_runtime*>(fakeRt);
  auto* fnc = reinterpret_cast<sy_nccl*>(fakeNc);
  auto* fbl = reinterpret_cast<sy_baseline*>(fakeBl);
  expectBench(f, "sy_bench_peer_write", "a runtime never created", STATE, sy_bench_peer_write(frt, 16, 1, &gbps), frt);
  expectBench(f, "sy_nccl_version", "a communicator never created", STATE, sy_nccl_version(fnc, &version), fnc);
  expectBench(f, "sy_nccl_destroy", "a communicator never created", STATE, sy_nccl_destroy(fnc), fnc);
  expectBench(f, "sy_baseline_create", "a communicator never created", STATE,
              sy_baseline_create(fnc, params, SY_PARAM_COUNT, reinterpret_cast<sy_baseline**>(&p)), fnc);
  expectBench(f, "sy_baseline_dispatch", "a baseline never created", STATE,
              sy_baseline_dispatch(fbl, nullptr, nullptr, nullptr, 0, nullptr), fbl);
  expectBench(f, "sy_baseline_region", "a baseline never created", STATE, sy_baseline_region(fbl, 7, &p, &n), fbl);
  expectBench(f, "sy_baseline_destroy", "a baseline never created", STATE, sy_baseline_destroy(fbl), fbl);

  // Helpers: NULL pointers and unknown kinds are refused before CUDA sees them.
  uint8_t host[64] = {};
  expectBench(f, "sy_fill_random", "ptr NULL", INV, sy_fill_random(nullptr, 16, 0, 1, nullptr));
  expectBench(f, "sy_fill_random", "kind 9", INV, sy_fill_random(host, 16, 9, 1, nullptr));
  expectBench(f, "sy_mem_get_info", gpu ? "both outputs NULL" : "no GPU", gpu ? SY_OK : SY_ERR_CUDA,
              sy_mem_get_info(nullptr, nullptr));
}

void benchRuntimeCases(Fuzz& f, World& w) {
  double gbps = 0;
  expectBench(f, "sy_bench_peer_write", "bytes 8", INV, sy_bench_peer_write(w.rt, 8, 1, &gbps), w.rt);
  expectBench(f, "sy_bench_peer_write", "iters 0", INV, sy_bench_peer_write(w.rt, 16, 0, &gbps), w.rt);
  expectBench(f, "sy_bench_peer_write", "gbps NULL", INV, sy_bench_peer_write(w.rt, 16, 1, nullptr), w.rt);
}

}  // namespace syfuzz
