// C ABI fuzzer, the half that needs a GPU (see abi_fuzz.h): a one-rank world on GPU 0, an endpoint
// for the case file's config, every phase with bad arguments and out of order, random sequences of
// valid and invalid calls with every completed step checked bit for bit against the case file
// (core's reference), stats, destroyed and wrong-kind handles, protocol faults, bad expert ids, teardown.
#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../../src/native/kernels/params.cuh"
#include "abi_fuzz_world.h"

namespace syfuzz {

Dev upload(Fuzz& f, const std::vector<uint8_t>& host, size_t bytes) {
  Dev d;
  d.n = bytes ? bytes : host.size();
  if (d.n == 0) return d;
  f.expect("sy_device_alloc", "a buffer of the step", SY_OK, sy_device_alloc(d.n, &d.p));
  if (!host.empty()) {
    f.expect("sy_memcpy_to_device", "the step's input", SY_OK, sy_memcpy_to_device(d.p, host.data(), host.size()));
  }
  return d;
}

bool createEndpoint(Fuzz& f, World& w, const char* why) {
  const CaseFile& c = *w.cf;
  return f.expect("sy_endpoint_create", why, SY_OK,
                  sy_endpoint_create(w.rt, c.params.data(), c.params.size(), c.symmetricBytes, 2000000000ull, &w.ep),
                  w.rt);
}

/// The next valid call of the step; after combine recv, y and the counts against the case file.
void advance(Fuzz& f, World& w) {
  const CaseFile& c = *w.cf;
  sy_error_info info{};
  switch (w.phase) {
    case 0:
      if (w.steps % 2 == 1) {  // every other step: the whole half in one call (one launch, masked)
        f.expect("sy_dispatch", "valid", SY_OK,
                 sy_dispatch(w.ep, w.x.p, c.inScalesPerRow ? static_cast<float*>(w.scales.p) : nullptr,
                             static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.stream),
                 w.ep);
        ++w.phase;  // dispatch recv is done too: case 1 checks its output
        advance(f, w);
        return;
      }
      f.expect("sy_dispatch_send", "valid", SY_OK,
               sy_dispatch_send(w.ep, w.x.p, c.inScalesPerRow ? static_cast<float*>(w.scales.p) : nullptr,
                                static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.stream),
               w.ep);
      break;
    case 1: {
      if (w.steps % 2 == 0) f.expect("sy_dispatch_recv", "valid", SY_OK, sy_dispatch_recv(w.ep, w.stream), w.ep);
      f.expect("sy_endpoint_check", "after dispatch recv", SY_OK, sy_endpoint_check(w.ep, w.stream, &info), w.ep);
      const int32_t* dc = nullptr;
      f.expect("sy_endpoint_counts", "valid", SY_OK, sy_endpoint_counts(w.ep, &dc), w.ep);
      std::vector<uint8_t> got(c.wantCounts.size());
      f.expect("sy_memcpy_to_host", "counts", SY_OK, sy_memcpy_to_host(got.data(), dc, got.size()));
      f.check("sy_dispatch_recv", "counts [L, R] equal core's reference", got == c.wantCounts);
      break;
    }
    case 2:
      if (w.steps % 2 == 1) {  // as dispatch: the whole half in one call
        f.expect("sy_combine", "valid", SY_OK,
                 sy_combine(w.ep, w.out.p, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.y.p,
                            w.stream),
                 w.ep);
        ++w.phase;  // combine recv is done too: the default case checks y
        advance(f, w);
        return;
      }
      f.expect("sy_combine_send", "valid", SY_OK, sy_combine_send(w.ep, w.out.p, w.stream), w.ep);
      break;
    default: {
      if (w.steps % 2 == 0) {
        f.expect("sy_combine_recv", "valid", SY_OK,
                 sy_combine_recv(w.ep, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.y.p,
                                 w.stream),
                 w.ep);
      }
      f.expect("sy_endpoint_check", "after combine recv", SY_OK, sy_endpoint_check(w.ep, w.stream, &info), w.ep);
      std::vector<uint8_t> got(c.wantY.size());
      f.expect("sy_memcpy_to_host", "y", SY_OK, sy_memcpy_to_host(got.data(), w.y.p, got.size()));
      f.check("sy_combine_recv", "step " + std::to_string(w.steps) + ": y bit-exact with core's reference",
              got == c.wantY);
      w.lastY = got;
      ++w.steps;
      if (w.stats) {
        std::vector<uint32_t> u(4 * c.ranks);
        std::vector<uint64_t> ns(2 * c.ranks);
        f.expect("sy_endpoint_stats", "after a step", SY_OK,
                 sy_endpoint_stats(w.ep, w.stream, c.ranks, &u[0], &u[c.ranks], &u[2 * c.ranks], &u[3 * c.ranks], &ns[0],
                                   &ns[c.ranks]),
                 w.ep);
        // Protocol version 2 counts route records and partials: one per token with a used slot
        // (one rank: every such token goes to itself).
        uint32_t used = 0;
        const auto* idx = reinterpret_cast<const int32_t*>(c.idx.data());
        const size_t K = static_cast<size_t>(c.params[sy::P_TOPK]);
        for (size_t t = 0; K > 0 && t < c.idx.size() / 4 / K; ++t) {
          bool any = false;
          for (size_t k = 0; k < K; ++k) any = any || idx[t * K + k] >= 0;
          used += any ? 1 : 0;
        }
        f.check("sy_endpoint_stats", "rows per peer equal the tokens with a used slot (one rank: all to itself)",
                u[0] == used && u[1] == used && u[2] == used && u[3] == used,
                std::to_string(u[0]) + " " + std::to_string(u[1]) + " " + std::to_string(u[2]) + " " +
                    std::to_string(u[3]) + ", used " + std::to_string(used));
        f.check("sy_endpoint_stats", "waits below the timeout", ns[0] < 2000000000ull && ns[1] < 2000000000ull);
      }
    }
  }
  w.phase = (w.phase + 1) % 4;
}

namespace {

constexpr int INV = SY_ERR_INVALID_ARGUMENT, STATE = SY_ERR_STATE, PHASE = SY_ERR_PHASE;
const char* const kPhase[4] = {"sy_dispatch_send", "sy_dispatch_recv", "sy_combine_send", "sy_combine_recv"};

/// y still holds what the last valid step (or the sentinel) left there.
void yUntouched(Fuzz& f, World& w, const std::string& after) {
  std::vector<uint8_t> got(w.lastY.size());
  f.expect("sy_stream_synchronize", "before reading y", SY_OK, sy_stream_synchronize(w.stream));
  f.expect("sy_memcpy_to_host", "y", SY_OK, sy_memcpy_to_host(got.data(), w.y.p, got.size()));
  f.check("sy_combine_recv", "y untouched after " + after, got == w.lastY);
}

/// Bad arguments of each phase function (kinds badCall knows).
constexpr int kKinds[4] = {11, 0, 6, 9};

/// A refused call of phase function `call`: bad arguments of kind `kind` (kind < 0: valid
/// arguments, out of order). Expected SY_ERR_PHASE when the endpoint's next call is another, else
/// SY_ERR_INVALID_ARGUMENT. Returns true when it was (wrongly) accepted: the world must be rebuilt.
/// Callers never ask for a valid call in its own phase.
bool badCall(Fuzz& f, World& w, int call, int kind) {
  if (call == 1) kind = -1;  // dispatch recv takes nothing that can be wrong (a bad stream would crash CUDA)
  if (kind < 0 && w.phase == call) return false;
  const CaseFile& c = *w.cf;
  const int want = w.phase == call ? INV : PHASE;
  const int M = static_cast<int>(c.maxTokens);
  auto* idx = static_cast<int32_t*>(w.idx.p);
  auto* wt = static_cast<float*>(w.w.p);
  auto* sc = c.inScalesPerRow ? static_cast<float*>(w.scales.p) : nullptr;
  static std::vector<uint8_t> host(1 << 20);
  void* garbage = reinterpret_cast<void*>(uintptr_t{0x10000});
  std::string what;
  int got = SY_OK;
  if (call == 0) {
    const void* x = w.x.p;
    const int32_t* ix = idx;
    int T = w.T();
    const float* s = sc;
    switch (kind < 0 ? -1 : kind % kKinds[0]) {
      case -1: what = "valid arguments"; break;
      case 0: T = -1, what = "num_tokens -1"; break;
      case 1: T = M + 1, what = "num_tokens maxTokensPerRank + 1"; break;
      case 2: x = nullptr, what = "x NULL"; break;
      case 3:  // only the quantising path needs 16-byte rows
        if (c.params[sy::P_QUANTIZE] != 0) x = w.x.b() + 1, what = "x misaligned (bf16 -> fp8 needs 16 bytes)";
        else x = nullptr, what = "x NULL";
        break;
      case 4: x = w.shortBuf.p, what = "x shorter than T * hidden"; break;
      case 5: x = host.data(), what = "x in pageable host memory"; break;
      case 6: x = garbage, what = "x an address no allocation covers"; break;
      case 7: ix = nullptr, what = "topk_idx NULL"; break;
      case 8: ix = reinterpret_cast<const int32_t*>(w.idx.b() + 2), what = "topk_idx misaligned"; break;
      case 9: ix = reinterpret_cast<const int32_t*>(host.data()), what = "topk_idx in pageable host memory"; break;
      default:
        if (w.other.p != nullptr) x = w.other.p, what = "x on another GPU";
        else if (c.inScalesPerRow == 0) s = static_cast<const float*>(w.w.p), what = "scales for bf16 input";
        else s = nullptr, what = "scales NULL for fp8 input";
    }
    got = sy_dispatch_send(w.ep, x, s, ix, static_cast<const float*>(w.w.p), T, w.stream);
  } else if (call == 1) {
    what = "valid arguments";
    got = sy_dispatch_recv(w.ep, w.stream);
  } else if (call == 2) {
    const void* o = w.out.p;
    switch (kind < 0 ? -1 : kind % kKinds[2]) {
      case -1: what = "valid arguments"; break;
      case 0: o = nullptr, what = "expert_out NULL"; break;
      case 1: o = w.out.b() + 1, what = "expert_out misaligned"; break;
      case 2: o = w.shortBuf.p, what = "expert_out shorter than rows * hidden"; break;
      case 3: o = host.data(), what = "expert_out in pageable host memory"; break;
      case 4: o = garbage, what = "expert_out an address no allocation covers"; break;
      default: o = w.other.p ? w.other.p : nullptr, what = w.other.p ? "expert_out on another GPU" : "expert_out NULL";
    }
    got = sy_combine_send(w.ep, o, w.stream);
  } else {
    const int32_t* ix = idx;
    const float* wx = wt;
    void* y = w.y.p;
    int T = w.T();
    switch (kind < 0 ? -1 : kind % kKinds[3]) {
      case -1: what = "valid arguments"; break;
      case 0: T = -1, what = "num_tokens -1"; break;
      case 1: T = M + 1, what = "num_tokens maxTokensPerRank + 1"; break;
      case 2: ix = nullptr, what = "topk_idx NULL"; break;
      case 3:  // NULL weights are accepted since protocol version 2 (combine recv does not read them)
        wx = reinterpret_cast<const float*>(w.w.b() + 2), what = "topk_weights misaligned";
        break;
      case 4: y = nullptr, what = "y NULL"; break;
      case 5: y = w.y.b() + 1, what = "y misaligned"; break;
      case 6: y = w.shortBuf.p, what = "y shorter than T * hidden"; break;
      case 7: y = host.data(), what = "y in pageable host memory"; break;
      default: y = w.other.p ? w.other.p : garbage, what = w.other.p ? "y on another GPU" : "y an address no allocation covers";
    }
    got = sy_combine_recv(w.ep, ix, wx, T, y, w.stream);
  }
  const std::string label = what + (want == PHASE ? std::string(" (next call: ") + kPhase[w.phase] + ")" : "");
  f.expect(kPhase[call], label, want, got, w.ep);
  return got == SY_OK;
}

/// After a call was wrongly accepted the endpoint's state is unknown: a fresh endpoint.
void rebuild(Fuzz& f, World& w) {
  sy_stream_synchronize(w.stream);
  sy_memcpy_to_host(w.lastY.data(), w.y.p, w.lastY.size());  // an accepted bad call may have written y
  f.expect("sy_endpoint_destroy", "rebuild after an accepted bad call", SY_OK, sy_endpoint_destroy(w.ep));
  w.ep = nullptr;
  w.phase = 0;
  createEndpoint(f, w, "rebuild");
  if (w.stats) f.expect("sy_endpoint_enable_stats", "rebuild", SY_OK, sy_endpoint_enable_stats(w.ep), w.ep);
}

void randomSequence(Fuzz& f, World& w, int iterations) {
  for (int i = 0; i < iterations; ++i) {
    const int call = f.below(4);
    const int kind = f.below(65) - 1;  // -1: valid arguments, out of order
    if (f.below(10) < 4 || ((kind < 0 || call == 1) && call == w.phase)) {
      advance(f, w);
    } else if (badCall(f, w, call, kind)) {
      rebuild(f, w);
    } else if (call == 3 && f.below(4) == 0) {
      yUntouched(f, w, "a refused sy_combine_recv");
    }
  }
  while (w.phase != 0) advance(f, w);
}

void outOfPhase(Fuzz& f, World& w) {
  // From idle, every call but dispatch send; then after each valid call, every call but the next.
  for (int step = 0; step < 4; ++step) {
    for (int call = 0; call < 4; ++call) {
      if (call == w.phase) continue;
      if (badCall(f, w, call, -1)) rebuild(f, w);
    }
    advance(f, w);
  }
}

}  // namespace

void endpointCases(Fuzz& f, const CaseFile& c, int iterations) {
  World w;
  w.cf = &c;
  uint8_t id[SY_UNIQUE_ID_BYTES] = {};
  f.expect("sy_get_unique_id", "valid", SY_OK, sy_get_unique_id(id));
  if (!f.expect("sy_runtime_create", "one rank on GPU 0", SY_OK, sy_runtime_create(id, 0, 1, 0, &w.rt))) return;
  f.expect("sy_stream_create", "valid", SY_OK, sy_stream_create(&w.stream));
  w.x = upload(f, c.x);
  w.scales = upload(f, c.scales);
  w.idx = upload(f, c.idx);
  w.w = upload(f, c.weights);
  w.out = upload(f, c.expertOut);
  w.lastY.assign(c.wantY.size(), 0x7f);
  w.y = upload(f, w.lastY);
  w.shortBuf = upload(f, std::vector<uint8_t>(64, 0));
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 1) {
    cudaSetDevice(1);
    if (cudaMalloc(&w.other.p, c.expertOut.size() + c.x.size() + c.wantY.size()) != cudaSuccess) w.other.p = nullptr;
    cudaSetDevice(0);
  }
  cudaGetLastError();
  f.check("setup", devices > 1 ? "memory on GPU 1 for the other-device cases" : "one GPU: no other-device cases",
          devices < 2 || w.other.p != nullptr);

  endpointCreation(f, w);
  if (!createEndpoint(f, w, "valid")) return;
  endpointQueries(f, w);
  outOfPhase(f, w);  // a whole valid step, each phase preceded by every out-of-order call
  yUntouched(f, w, "nothing");
  for (int call = 0; call < 4; ++call) {  // every kind of bad argument, in the call's own phase
    for (int kind = 0; kind < kKinds[call]; ++kind) {
      while (w.phase != call) advance(f, w);
      if (badCall(f, w, call, kind)) rebuild(f, w);
    }
    if (call == 3) yUntouched(f, w, "every refused sy_combine_recv");
  }
  while (w.phase != 0) advance(f, w);
  f.expect("sy_endpoint_enable_stats", "valid", SY_OK, sy_endpoint_enable_stats(w.ep), w.ep);
  f.expect("sy_endpoint_enable_stats", "twice (no-op)", SY_OK, sy_endpoint_enable_stats(w.ep), w.ep);
  w.stats = true;
  uint32_t u[8] = {};
  uint64_t ns[8] = {};
  f.expect("sy_endpoint_stats", "ranks + 1 entries", INV,
           sy_endpoint_stats(w.ep, w.stream, c.ranks + 1, u, u, u, u, ns, ns), w.ep);
  randomSequence(f, w, iterations);
  destroyedEndpoint(f, w);
  protocolFault(f, w);
  takenRowFault(f, w);
  badExpertIds(f, w);
  countFaults(f, w);
  for (int i = 0; i < 4; ++i) advance(f, w);  // the main endpoint still works after all of it
  f.expect("sy_runtime_destroy", "while an endpoint is alive", STATE, sy_runtime_destroy(w.rt), w.rt);

  f.expect("sy_endpoint_destroy", "the main endpoint", SY_OK, sy_endpoint_destroy(w.ep));
  for (Dev* d : {&w.x, &w.scales, &w.idx, &w.w, &w.out, &w.y, &w.shortBuf}) {
    if (d->p) f.expect("sy_device_free", "a step buffer", SY_OK, sy_device_free(d->p));
  }
  if (w.other.p) cudaFree(w.other.p);
  f.expect("sy_stream_destroy", "valid", SY_OK, sy_stream_destroy(w.stream));
  sy_runtime* rt = w.rt;
  f.expect("sy_runtime_destroy", "valid", SY_OK, sy_runtime_destroy(rt));
  sy_runtime_info info{};
  const uint64_t* params = c.params.data();
  sy_endpoint* ep = nullptr;
  f.expect("sy_runtime_info_get", "destroyed runtime", STATE, sy_runtime_info_get(rt, &info), rt);
  f.expect("sy_barrier", "destroyed runtime", STATE, sy_barrier(rt, nullptr), rt);
  f.expect("sy_endpoint_create", "destroyed runtime", STATE,
           sy_endpoint_create(rt, params, SY_PARAM_COUNT, c.symmetricBytes, 1000000000ull, &ep), rt);
  f.expect("sy_runtime_destroy", "destroyed twice", STATE, sy_runtime_destroy(rt), rt);
}

}  // namespace syfuzz
