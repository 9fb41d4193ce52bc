// C ABI fuzzer: the calls on the GPU world that need no step (see abi_fuzz_world.h).
#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../../src/native/kernels/params.cuh"
#include "abi_fuzz_world.h"
#include "switchyard_layout.h"

namespace syfuzz {
namespace {

constexpr int INV = SY_ERR_INVALID_ARGUMENT, STATE = SY_ERR_STATE;

}  // namespace

void endpointQueries(Fuzz& f, World& w) {
  void* p = nullptr;
  uint64_t n = 0;
  f.expect("sy_endpoint_region", "region -1", INV, sy_endpoint_region(w.ep, -1, &p, &n), w.ep);
  f.expect("sy_endpoint_region", "region SY_REGION_COUNT (past REGION_NAMES)", INV,
           sy_endpoint_region(w.ep, SY_REGION_COUNT, &p, &n), w.ep);
  f.expect("sy_endpoint_region", "outputs NULL", SY_OK, sy_endpoint_region(w.ep, 1, nullptr, nullptr), w.ep);
  f.expect("sy_endpoint_counts", "counts NULL", INV, sy_endpoint_counts(w.ep, nullptr), w.ep);
  f.expect("sy_endpoint_set_blocks", "blocks 0", INV, sy_endpoint_set_blocks(w.ep, 0), w.ep);
  f.expect("sy_endpoint_set_blocks", "blocks 70000", INV, sy_endpoint_set_blocks(w.ep, 70000), w.ep);
  f.expect("sy_endpoint_memory", "outputs NULL", SY_OK, sy_endpoint_memory(w.ep, nullptr, nullptr), w.ep);
  uint32_t u[8] = {};
  uint64_t ns[8] = {};
  f.expect("sy_endpoint_stats", "before sy_endpoint_enable_stats", STATE,
           sy_endpoint_stats(w.ep, w.stream, w.cf->ranks, u, u, u, u, ns, ns), w.ep);
#if SY_ABI_FUZZ_BENCH
  benchRuntimeCases(f, w);
#endif
  sy_runtime_info info{};
  f.expect("sy_runtime_info_get", "out NULL", INV, sy_runtime_info_get(w.rt, nullptr), w.rt);
  f.expect("sy_runtime_info_get", "valid", SY_OK, sy_runtime_info_get(w.rt, &info), w.rt);
  // A handle of the other kind.
  f.expect("sy_dispatch_recv", "a runtime passed as the endpoint", INV,
           sy_dispatch_recv(reinterpret_cast<sy_endpoint*>(w.rt), w.stream), w.rt);
  f.expect("sy_barrier", "an endpoint passed as the runtime", INV,
           sy_barrier(reinterpret_cast<sy_runtime*>(w.ep), w.stream), w.ep);
  // Its cudaErrorIllegalState once stayed in CUDA's last-error slot and failed the next valid
  // sy_dispatch_send (outOfPhase's first step); expect() now checks the slot after every call.
  void* g = nullptr;
  f.expect("sy_graph_end_capture", "no capture begun", SY_ERR_CUDA, sy_graph_end_capture(w.stream, &g));
}

void endpointCreation(Fuzz& f, World& w) {
  const CaseFile& c = *w.cf;
  sy_endpoint* ep = nullptr;
  auto withParam = [&](int i, uint64_t v) {
    std::vector<uint64_t> p = c.params;
    p[i] = v;
    return p;
  };
  const uint64_t bytes = c.symmetricBytes, t = 1000000000ull;
  f.expect("sy_endpoint_create", "params NULL", INV, sy_endpoint_create(w.rt, nullptr, SY_PARAM_COUNT, bytes, t, &ep), w.rt);
  f.expect("sy_endpoint_create", "33 parameters", INV, sy_endpoint_create(w.rt, c.params.data(), 33, bytes, t, &ep), w.rt);
  f.expect("sy_endpoint_create", "timeout 0", INV, sy_endpoint_create(w.rt, c.params.data(), SY_PARAM_COUNT, bytes, 0, &ep), w.rt);
  f.expect("sy_endpoint_create", "symmetric_bytes 256", INV,
           sy_endpoint_create(w.rt, c.params.data(), SY_PARAM_COUNT, 256, t, &ep), w.rt);
  f.expect("sy_endpoint_create", "out NULL", INV,
           sy_endpoint_create(w.rt, c.params.data(), SY_PARAM_COUNT, bytes, t, nullptr), w.rt);
  const struct {
    int index;
    uint64_t value;
    const char* what;
  } bad[] = {{sy::P_RANKS, c.ranks + 1ull, "more ranks than the runtime"},
             {sy::P_HIDDEN, 0, "hidden 0"},
             {sy::P_LOCAL_EXPERTS, 0, "localExperts 0"},
             {sy::P_DISPATCH_ELEM_BYTES, 3, "dispatchElemBytes 3"},
             {sy::P_SCALAR_COUNT + 2 * sy::R_DISPATCH_X, c.params[sy::P_SCALAR_COUNT + 2 * sy::R_DISPATCH_X] + 8,
              "dispatchX offset not 256-aligned"}};
  for (const auto& b : bad) {
    const std::vector<uint64_t> p = withParam(b.index, b.value);
    f.expect("sy_endpoint_create", b.what, INV, sy_endpoint_create(w.rt, p.data(), SY_PARAM_COUNT, bytes, t, &ep), w.rt);
  }
  f.check("sy_endpoint_create", "a refused create leaves *out NULL", ep == nullptr);
}

void destroyedEndpoint(Fuzz& f, World& w) {
  const CaseFile& c = *w.cf;
  sy_endpoint* ep = nullptr;
  f.expect("sy_endpoint_create", "a second endpoint", SY_OK,
           sy_endpoint_create(w.rt, c.params.data(), SY_PARAM_COUNT, c.symmetricBytes, 1000000000ull, &ep), w.rt);
  f.expect("sy_endpoint_destroy", "the second endpoint", SY_OK, sy_endpoint_destroy(ep));
  // Nothing is created in between, so the address cannot have been reused.
  void* p = nullptr;
  uint64_t n = 0;
  const int32_t* counts = nullptr;
  sy_error_info info{};
  uint32_t u[8] = {};
  uint64_t ns[8] = {};
  f.expect("sy_endpoint_region", "destroyed", STATE, sy_endpoint_region(ep, 1, &p, &n), ep);
  f.expect("sy_endpoint_counts", "destroyed", STATE, sy_endpoint_counts(ep, &counts), ep);
  f.expect("sy_dispatch_send", "destroyed", STATE,
           sy_dispatch_send(ep, w.x.p, nullptr, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.stream), ep);
  f.expect("sy_dispatch_recv", "destroyed", STATE, sy_dispatch_recv(ep, w.stream), ep);
  f.expect("sy_combine_send", "destroyed", STATE, sy_combine_send(ep, w.out.p, w.stream), ep);
  f.expect("sy_combine_recv", "destroyed", STATE,
           sy_combine_recv(ep, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.y.p, w.stream), ep);
  f.expect("sy_endpoint_check", "destroyed", STATE, sy_endpoint_check(ep, w.stream, &info), ep);
  f.expect("sy_endpoint_set_blocks", "destroyed", STATE, sy_endpoint_set_blocks(ep, 8), ep);
  f.expect("sy_endpoint_memory", "destroyed", STATE, sy_endpoint_memory(ep, &n, &n), ep);
  f.expect("sy_endpoint_enable_stats", "destroyed", STATE, sy_endpoint_enable_stats(ep), ep);
  f.expect("sy_endpoint_stats", "destroyed", STATE, sy_endpoint_stats(ep, w.stream, c.ranks, u, u, u, u, ns, ns), ep);
  f.expect("sy_endpoint_destroy", "destroyed twice", STATE, sy_endpoint_destroy(ep), ep);
  f.check("sy_last_error", "of a destroyed endpoint", sy_last_error(ep) != nullptr);
}

/// combine recv told fewer tokens than dispatch sent: the kernel names expert rank 0's count.
void protocolFault(Fuzz& f, World& w) {
  const CaseFile& c = *w.cf;
  sy_endpoint* ep = nullptr;
  f.expect("sy_endpoint_create", "an endpoint for the protocol fault", SY_OK,
           sy_endpoint_create(w.rt, c.params.data(), SY_PARAM_COUNT, c.symmetricBytes, 1000000000ull, &ep), w.rt);
  f.expect("sy_endpoint_enable_stats", "before the faulty step", SY_OK, sy_endpoint_enable_stats(ep), ep);
  const float* sc = c.inScalesPerRow ? static_cast<float*>(w.scales.p) : nullptr;
  sy_error_info info{};
  f.expect("sy_dispatch_send", "valid", SY_OK, sy_dispatch_send(ep, w.x.p, sc, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.stream), ep);
  f.expect("sy_dispatch_recv", "valid", SY_OK, sy_dispatch_recv(ep, w.stream), ep);
  f.expect("sy_combine_send", "valid", SY_OK, sy_combine_send(ep, w.out.p, w.stream), ep);
  f.expect("sy_combine_recv", "0 tokens where dispatch sent T (enqueued: the kernel finds it)", SY_OK,
           sy_combine_recv(ep, nullptr, nullptr, 0, nullptr, w.stream), ep);
  const int rc = sy_endpoint_check(ep, w.stream, &info);
  f.expect("sy_endpoint_check", "partials announced != tokens routed", SY_ERR_PROTOCOL, rc, ep);
  const std::string m = rc == SY_OK ? "" : sy_last_error(ep);
  f.check("sy_endpoint_check", "error info names expert rank 0, combine recv, code 4",
          info.code == 4 && info.stage == 2 && info.peer == 0, m);
  f.check("sy_endpoint_check", "message as core's reference words it",
          m.find("expert rank 0 announced") != std::string::npos &&
              m.find("of this rank's tokens route to it") != std::string::npos,
          m);
  f.expect("sy_dispatch_send", "after a failed step", STATE,
           sy_dispatch_send(ep, w.x.p, sc, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(), w.stream), ep);
  uint32_t u[4] = {};
  uint64_t ns[2] = {};
  f.expect("sy_endpoint_stats", "after the failed step", SY_OK,
           sy_endpoint_stats(ep, w.stream, c.ranks, &u[0], &u[1], &u[2], &u[3], &ns[0], &ns[1]), ep);
  f.check("sy_endpoint_stats", "the failed step's counts are there", u[3] == u[0] && u[0] > 0);
  f.expect("sy_endpoint_destroy", "the failed endpoint", SY_OK, sy_endpoint_destroy(ep));
}

/// The case's config with `layout` (contiguous: expertAlignment 4), through the C layout.
bool layoutOf(const CaseFile& c, int layout, sy_layout* out) {
  sy_config config;
  sy_config_init(&config);
  config.ranks = 1;
  config.experts = c.localExperts;
  config.top_k = c.topK;
  config.hidden = c.hidden;
  config.max_tokens_per_rank = c.maxTokens;
  config.expert_alignment = layout == SY_LAYOUT_CONTIGUOUS ? 4 : 1;
  config.input_dtype = c.inElemBytes == 1 ? SY_DTYPE_FP8_E4M3 : SY_DTYPE_BF16;
  config.dispatch_dtype = c.params[sy::P_DISPATCH_ELEM_BYTES] == 1 ? SY_DTYPE_FP8_E4M3 : SY_DTYPE_BF16;
  config.layout = layout;
  std::memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  return sy_layout_compute(&config, out) == SY_OK;
}

/// A route record naming a row another record of the step names (written over the sent records
/// before dispatch recv reads them), in each layout: the step fails with a bad record naming the
/// source, record and fault, as core's reference refuses it; the endpoint refuses further steps.
void takenRowFault(Fuzz& f, World& w) {
  const CaseFile& c = *w.cf;
  for (int layout : {SY_LAYOUT_MASKED, SY_LAYOUT_CONTIGUOUS}) {
    const std::string name = layout == SY_LAYOUT_MASKED ? "masked" : "contiguous";
    static sy_layout l;
    if (!f.check("sy_layout_compute", name + " config of the case", layoutOf(c, layout, &l), l.error)) continue;
    sy_endpoint* ep = nullptr;
    if (!f.expect("sy_endpoint_create", name + ": an endpoint for the taken-row fault", SY_OK,
                  sy_endpoint_create(w.rt, l.params, l.param_count, l.symmetric_bytes, 1000000000ull, &ep), w.rt)) {
      continue;
    }
    const float* sc = c.inScalesPerRow ? static_cast<float*>(w.scales.p) : nullptr;
    f.expect("sy_dispatch_send", name + ": valid", SY_OK,
             sy_dispatch_send(ep, w.x.p, sc, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(),
                              w.stream),
             ep);
    f.expect("sy_stream_synchronize", name + ": the records are written", SY_OK, sy_stream_synchronize(w.stream));
    // The records this rank sent itself ([M, W] i32 at source 0), as many as its signal announces.
    void *signal = nullptr, *routes = nullptr;
    uint64_t signalBytes = 0, routeBytes = 0;
    f.expect("sy_endpoint_region", name + ": dispatchSignal", SY_OK,
             sy_endpoint_region(ep, SY_REGION_DISPATCH_SIGNAL, &signal, &signalBytes), ep);
    f.expect("sy_endpoint_region", name + ": dispatchRoutes", SY_OK,
             sy_endpoint_region(ep, SY_REGION_DISPATCH_ROUTES, &routes, &routeBytes), ep);
    uint32_t word = 0;
    std::vector<int32_t> rec(routeBytes / 4);
    f.expect("sy_memcpy_to_host", name + ": the signal", SY_OK, sy_memcpy_to_host(&word, signal, 4));
    f.expect("sy_memcpy_to_host", name + ": the records", SY_OK, sy_memcpy_to_host(rec.data(), routes, routeBytes));
    const int records = static_cast<int>((word & ((1u << 21) - 1)) - 1);
    const int W = static_cast<int>(l.route_words);
    // Two records with an entry for the same local expert: the later one takes the earlier's index.
    int target = -1;
    for (int a = 0; a < records && target < 0; ++a) {
      for (int b = a + 1; b < records && target < 0; ++b) {
        for (int i = 0; i < rec[a * W + 1] && target < 0; ++i) {
          for (int k = 0; k < rec[b * W + 1]; ++k) {
            const int32_t* ea = &rec[a * W + 2 + 4 * i];
            int32_t* eb = &rec[b * W + 2 + 4 * k];
            if (ea[0] != eb[0]) continue;
            eb[2] = ea[2];
            target = b;
            break;
          }
        }
      }
    }
    if (!f.check("setup", name + ": two records share a local expert", target >= 0)) {
      sy_endpoint_destroy(ep);
      continue;
    }
    f.expect("sy_memcpy_to_device", name + ": the corrupted record", SY_OK,
             sy_memcpy_to_device(static_cast<int32_t*>(routes) + target * W, &rec[target * W], W * 4));
    f.expect("sy_dispatch_recv", name + ": enqueued (the kernel finds the fault)", SY_OK,
             sy_dispatch_recv(ep, w.stream), ep);
    sy_error_info info{};
    const int rc = sy_endpoint_check(ep, w.stream, &info);
    f.expect("sy_endpoint_check", name + ": a row named twice", SY_ERR_PROTOCOL, rc, ep);
    const std::string m = rc == SY_OK ? "" : sy_last_error(ep);
    f.check("sy_endpoint_check", name + ": error info names source 0, dispatch recv, a bad record, the fault",
            info.code == sy::E_BAD_RECORD && info.stage == sy::S_DISPATCH_RECV && info.peer == 0 &&
                info.region == sy::R_DISPATCH_ROUTES && info.detail1 == sy::F_TAKEN,
            m);
    f.check("sy_endpoint_check", name + ": the message says what", m.find("a second time") != std::string::npos, m);
    f.expect("sy_dispatch_send", name + ": after the failed step", STATE,
             sy_dispatch_send(ep, w.x.p, sc, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), w.T(),
                              w.stream),
             ep);
    f.expect("sy_endpoint_destroy", name + ": the failed endpoint", SY_OK, sy_endpoint_destroy(ep));
  }
}

}  // namespace syfuzz
