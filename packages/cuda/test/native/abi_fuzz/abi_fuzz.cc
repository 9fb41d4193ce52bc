// C ABI fuzzer, entry point and the calls that need no GPU (see abi_fuzz.h); the bench library's
// in abi_fuzz_bench.cc, when it is built (SY_ABI_FUZZ_BENCH).
//   abi_fuzz [--case FILE] [--seed N] [--iterations N]
// Without a GPU (or without --case) only the library-level calls run; that half also runs on CPU
// machines (scripts/check-native.sh links it against a stand-in NVSHMEM).
#include "abi_fuzz.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace syfuzz {

const char* statusName(int status) {
  const char* name = sy_status_name(status);
  return name != nullptr ? name : "unknown status";
}

namespace {

std::string json(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

template <typename T>
bool readPod(FILE* f, T& v) {
  return std::fread(&v, sizeof(T), 1, f) == 1;
}

bool readBlob(FILE* f, std::vector<uint8_t>& v) {
  uint64_t n = 0;
  if (!readPod(f, n) || n > (1ull << 32)) return false;
  v.resize(n);
  return n == 0 || std::fread(v.data(), 1, n, f) == n;
}

}  // namespace

void Fuzz::line(const char* call, const std::string& what, const std::string& want, const std::string& got, bool ok,
                const std::string& message) {
  std::printf("{\"call\":%s,\"case\":%s,\"want\":%s,\"got\":%s,\"ok\":%s,\"message\":%s}\n", json(call).c_str(),
              json(what).c_str(), json(want).c_str(), json(got).c_str(), ok ? "true" : "false", json(message).c_str());
  std::fflush(stdout);
}

bool Fuzz::expect(const char* call, const std::string& what, int want, int got, const void* handle,
                  LastError lastError) {
  ++calls_;
  std::string message;
  bool ok = got == want;
  if (got != SY_OK) {
    const char* m = lastError(handle);
    const char* t = lastError(nullptr);
    message = m ? m : "";
    if (message.empty() || t == nullptr || *t == '\0') ok = false;
    const bool named = want == SY_ERR_INVALID_ARGUMENT || want == SY_ERR_STATE || want == SY_ERR_PHASE;
    if (named && message.find(call) == std::string::npos) {
      ok = false;
      message = "[the message does not name " + std::string(call) + "] " + message;
    }
    ++refused_;
    ++refusedBy_[statusName(got)];
  } else {
    ++accepted_;
  }
  // Without a GPU the runtime's "no driver" error never leaves the slot, so this is GPU-only.
  // Read with cudaGetLastError so one leftover is blamed on one call, not on every call after it.
  const cudaError_t left = gpu_ ? cudaGetLastError() : cudaSuccess;
  if (left != cudaSuccess) {
    ok = false;
    message = std::string("[left ") + cudaGetErrorName(left) + " in CUDA's last-error slot] " + message;
  }
  if (!ok) ++failures_;
  line(call, what, statusName(want), statusName(got), ok, message);
  return got == want;
}

bool Fuzz::check(const char* call, const std::string& what, bool ok, const std::string& detail) {
  ++calls_;
  if (!ok) ++failures_;
  line(call, what, "true", ok ? "true" : "false", ok, detail);
  return ok;
}

int Fuzz::finish(const std::string& mode, uint64_t seed) {
  std::string by;
  for (const auto& [k, v] : refusedBy_) by += (by.empty() ? "" : ",") + json(k) + ":" + std::to_string(v);
  std::printf("{\"summary\":{\"mode\":%s,\"seed\":%llu,\"calls\":%d,\"failures\":%d,\"refused\":%d,\"accepted\":%d,"
              "\"refusedBy\":{%s}}}\n",
              json(mode).c_str(), static_cast<unsigned long long>(seed), calls_, failures_, refused_, accepted_,
              by.c_str());
  std::fflush(stdout);
  return failures_ == 0 ? 0 : 1;
}

bool readCase(const char* path, CaseFile& c) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "abi_fuzz: cannot open %s\n", path);
    return false;
  }
  char magic[4];
  uint32_t version = 0, count = 0;
  bool ok = std::fread(magic, 1, 4, f) == 4 && std::memcmp(magic, "SYFZ", 4) == 0 && readPod(f, version) &&
            version == 1 && readPod(f, count) && count == SY_PARAM_COUNT;
  if (ok) {
    c.params.resize(count);
    ok = std::fread(c.params.data(), 8, count, f) == count && readPod(f, c.symmetricBytes) && readPod(f, c.tokens) &&
         readPod(f, c.hidden) && readPod(f, c.topK) && readPod(f, c.localExperts) && readPod(f, c.ranks) &&
         readPod(f, c.maxTokens) && readPod(f, c.inElemBytes) && readPod(f, c.inScalesPerRow) && readPod(f, c.rows);
  }
  for (auto* v : {&c.x, &c.scales, &c.idx, &c.weights, &c.expertOut, &c.wantCounts, &c.wantY}) {
    ok = ok && readBlob(f, *v);
  }
  std::fclose(f);
  if (!ok) std::fprintf(stderr, "abi_fuzz: %s is not a version-1 case file (node dist/cli.js abi-fuzz writes it)\n", path);
  return ok;
}

void libraryCases(Fuzz& f, bool gpu) {
  const int INV = SY_ERR_INVALID_ARGUMENT, STATE = SY_ERR_STATE;
  f.check("sy_version", "a version string", sy_version() != nullptr && *sy_version() != '\0', sy_version());
  f.check("sy_param_names", "the parameter order", sy_param_names() != nullptr && *sy_param_names() != '\0');
  f.check("sy_last_error", "NULL handle gives a string", sy_last_error(nullptr) != nullptr);
  f.expect("sy_get_unique_id", "out NULL", INV, sy_get_unique_id(nullptr));

  uint8_t id[SY_UNIQUE_ID_BYTES] = {};
  sy_runtime* rt = nullptr;
  f.expect("sy_runtime_create", "unique_id NULL", INV, sy_runtime_create(nullptr, 0, 1, 0, &rt));
  f.expect("sy_runtime_create", "rank -1", INV, sy_runtime_create(id, -1, 1, 0, &rt));
  f.expect("sy_runtime_create", "rank == ranks", INV, sy_runtime_create(id, 1, 1, 0, &rt));
  f.expect("sy_runtime_create", "ranks 0", INV, sy_runtime_create(id, 0, 0, 0, &rt));
  f.expect("sy_runtime_create", "out NULL", INV, sy_runtime_create(id, 0, 1, 0, nullptr));
  if (gpu) f.expect("sy_runtime_create", "device 4096", INV, sy_runtime_create(id, 0, 1, 4096, &rt));

  // NULL handles: refused; destroying NULL is a no-op.
  sy_runtime_info info{};
  uint64_t params[SY_PARAM_COUNT] = {};
  void* p = nullptr;
  uint64_t n = 0;
  const int32_t* counts = nullptr;
  sy_error_info err{};
  uint32_t u[4] = {};
  uint64_t w[4] = {};
  f.expect("sy_runtime_info_get", "rt NULL", INV, sy_runtime_info_get(nullptr, &info));
  f.expect("sy_runtime_destroy", "rt NULL (no-op)", SY_OK, sy_runtime_destroy(nullptr));
  f.expect("sy_barrier", "rt NULL", INV, sy_barrier(nullptr, nullptr));
  f.expect("sy_endpoint_create", "rt NULL", INV, sy_endpoint_create(nullptr, params, SY_PARAM_COUNT, 1 << 20, 1000, nullptr));
  f.expect("sy_endpoint_destroy", "ep NULL (no-op)", SY_OK, sy_endpoint_destroy(nullptr));
  f.expect("sy_endpoint_region", "ep NULL", INV, sy_endpoint_region(nullptr, 0, &p, &n));
  f.expect("sy_endpoint_counts", "ep NULL", INV, sy_endpoint_counts(nullptr, &counts));
  f.expect("sy_dispatch_send", "ep NULL", INV, sy_dispatch_send(nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr));
  f.expect("sy_dispatch_recv", "ep NULL", INV, sy_dispatch_recv(nullptr, nullptr));
  f.expect("sy_combine_send", "ep NULL", INV, sy_combine_send(nullptr, nullptr, nullptr));
  f.expect("sy_combine_recv", "ep NULL", INV, sy_combine_recv(nullptr, nullptr, nullptr, 0, nullptr, nullptr));
  f.expect("sy_dispatch", "ep NULL", INV, sy_dispatch(nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr));
  f.expect("sy_combine", "ep NULL", INV, sy_combine(nullptr, nullptr, nullptr, nullptr, 0, nullptr, nullptr));
  f.expect("sy_endpoint_check", "ep NULL", INV, sy_endpoint_check(nullptr, nullptr, &err));
  f.expect("sy_endpoint_set_blocks", "ep NULL", INV, sy_endpoint_set_blocks(nullptr, 8));
  f.expect("sy_endpoint_memory", "ep NULL", INV, sy_endpoint_memory(nullptr, &n, &n));
  f.expect("sy_endpoint_enable_stats", "ep NULL", INV, sy_endpoint_enable_stats(nullptr));
  f.expect("sy_endpoint_stats", "ep NULL", INV, sy_endpoint_stats(nullptr, nullptr, 1, u, u, u, u, w, w));

  // Handles this library never made, with each kind's magic in place: refused without a read past it.
  alignas(16) static uint8_t fakeRt[4096], fakeEp[4096], fakeBuf[4096];
  const uint32_t magics[2] = {0x53595254u, 0x53594550u};
  uint8_t* fakes[2] = {fakeRt, fakeEp};
  for (int i = 0; i < 2; ++i) std::memcpy(fakes[i], &magics[i], 4);
  auto* frt = reinterpret_cast<sy_runtime*>(fakeRt);
  auto* fep = reinterpret_cast<sy_endpoint*>(fakeEp);
  f.expect("sy_runtime_info_get", "a runtime never created", STATE, sy_runtime_info_get(frt, &info), frt);
  f.expect("sy_barrier", "a runtime never created", STATE, sy_barrier(frt, nullptr), frt);
  f.expect("sy_endpoint_create", "a runtime never created", STATE,
           sy_endpoint_create(frt, params, SY_PARAM_COUNT, 1 << 20, 1000, reinterpret_cast<sy_endpoint**>(&p)), frt);
  f.expect("sy_runtime_destroy", "a runtime never created", STATE, sy_runtime_destroy(frt), frt);
  f.expect("sy_endpoint_region", "an endpoint never created", STATE, sy_endpoint_region(fep, 0, &p, &n), fep);
  f.expect("sy_endpoint_counts", "an endpoint never created", STATE, sy_endpoint_counts(fep, &counts), fep);
  f.expect("sy_dispatch_send", "an endpoint never created", STATE,
           sy_dispatch_send(fep, nullptr, nullptr, nullptr, nullptr, 0, nullptr), fep);
  f.expect("sy_dispatch_recv", "an endpoint never created", STATE, sy_dispatch_recv(fep, nullptr), fep);
  f.expect("sy_combine_send", "an endpoint never created", STATE, sy_combine_send(fep, fakeBuf, nullptr), fep);
  f.expect("sy_combine_recv", "an endpoint never created", STATE,
           sy_combine_recv(fep, nullptr, nullptr, 0, nullptr, nullptr), fep);
  f.expect("sy_dispatch", "an endpoint never created", STATE,
           sy_dispatch(fep, nullptr, nullptr, nullptr, nullptr, 0, nullptr), fep);
  f.expect("sy_combine", "an endpoint never created", STATE,
           sy_combine(fep, fakeBuf, nullptr, nullptr, 0, nullptr, nullptr), fep);
  f.expect("sy_endpoint_check", "an endpoint never created", STATE, sy_endpoint_check(fep, nullptr, &err), fep);
  f.expect("sy_endpoint_set_blocks", "an endpoint never created", STATE, sy_endpoint_set_blocks(fep, 8), fep);
  f.expect("sy_endpoint_memory", "an endpoint never created", STATE, sy_endpoint_memory(fep, &n, &n), fep);
  f.expect("sy_endpoint_enable_stats", "an endpoint never created", STATE, sy_endpoint_enable_stats(fep), fep);
  f.expect("sy_endpoint_stats", "an endpoint never created", STATE,
           sy_endpoint_stats(fep, nullptr, 1, u, u, u, u, w, w), fep);
  f.expect("sy_endpoint_destroy", "an endpoint never created (not freed)", STATE, sy_endpoint_destroy(fep), fep);
  f.check("sy_last_error", "of a handle never created: the thread's message", sy_last_error(fep) != nullptr);

  // Helpers: NULL out-parameters and pointers are refused before CUDA sees them.
  uint8_t host[64] = {};
  float ms = 0;
  f.expect("sy_device_alloc", "ptr NULL", INV, sy_device_alloc(16, nullptr));
  f.expect("sy_memcpy_to_device", "dst NULL", INV, sy_memcpy_to_device(nullptr, host, 16));
  f.expect("sy_memcpy_to_host", "src NULL", INV, sy_memcpy_to_host(host, nullptr, 16));
  f.expect("sy_memset_device", "dst NULL", INV, sy_memset_device(nullptr, 0, 16));
  f.expect("sy_stream_create", "stream NULL", INV, sy_stream_create(nullptr));
  f.expect("sy_graph_begin_capture", "the default stream", INV, sy_graph_begin_capture(nullptr));
  f.expect("sy_graph_end_capture", "graph_exec NULL", INV, sy_graph_end_capture(nullptr, nullptr));
  f.expect("sy_graph_launch", "graph_exec NULL", INV, sy_graph_launch(nullptr, nullptr));
  f.expect("sy_event_create", "event NULL", INV, sy_event_create(nullptr));
  f.expect("sy_event_record", "event NULL", INV, sy_event_record(nullptr, nullptr, 0));
  f.expect("sy_event_elapsed_ms", "events NULL", INV, sy_event_elapsed_ms(nullptr, nullptr, &ms));
}

}  // namespace syfuzz

int main(int argc, char** argv) {
  const char* casePath = nullptr;
  uint64_t seed = 1;
  int iterations = 400;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (std::strcmp(argv[i], "--case") == 0 && more) casePath = argv[++i];
    else if (std::strcmp(argv[i], "--seed") == 0 && more) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (std::strcmp(argv[i], "--iterations") == 0 && more) iterations = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: abi_fuzz [--case FILE] [--seed N] [--iterations N]\n");
      return 2;
    }
  }
  int devices = 0;
  const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  cudaGetLastError();
  syfuzz::Fuzz f(seed, gpu);
  syfuzz::libraryCases(f, gpu);
#if SY_ABI_FUZZ_BENCH
  syfuzz::benchCases(f, gpu);
#endif
  std::string mode = gpu ? "gpu" : "no-gpu (library-level calls only)";
  if (gpu && casePath != nullptr) {
    syfuzz::CaseFile cf;
    if (!syfuzz::readCase(casePath, cf)) return 2;
    syfuzz::endpointCases(f, cf, iterations);
  } else if (gpu) {
    mode = "gpu without --case (library-level calls only)";
  }
  return f.finish(mode, seed);
}
