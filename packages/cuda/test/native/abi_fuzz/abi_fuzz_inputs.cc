// C ABI fuzzer: what the device refuses that the host cannot see (abi_fuzz_world.h's world). In
// each layout, every case on an endpoint of its own:
//  - expert ids: one entry above the experts, one below -1, one expert named twice by a token, at a
//    random token and slot. Dispatch send is enqueued and its kernel refuses the step before any
//    store: the check reports SY_ERR_INVALID_ARGUMENT with the token, slot and value a plain host
//    reading of the rule finds (the first bad entry), and every symmetric region the send writes
//    (signals, counts, records, payload, contiguous recvX) holds what it held before. The same ids
//    in combine recv after a valid dispatch: the same error, stage combine recv.
//  - counts: one count word raised by one row after a valid send (rows announced that no record
//    names, so never written): the step fails naming the source (found by combine recv's check
//    block, once dispatch recv has read every record; or, when the raise passes what one source can send, by
//    dispatch recv before anything is placed); contiguous counts that each
//    pass the per-word bound but add up to more rows than one source can send: refused before
//    anything is placed.
#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../../src/native/kernels/params.cuh"
#include "abi_fuzz_world.h"

namespace syfuzz {
namespace {

struct BadEntry {
  int token = -1, slot = -1, earlier = -1;  // earlier: the slot naming the same expert first, or -1
  int32_t value = 0;
};

/// The first entry of topk [T, K] that breaks the rule (ids in [-1, E), no expert twice a token).
BadEntry firstBad(const std::vector<int32_t>& idx, int T, int K, int E) {
  BadEntry b;
  for (int t = 0; t < T; ++t) {
    for (int k = 0; k < K; ++k) {
      const int32_t e = idx[static_cast<size_t>(t) * K + k];
      int earlier = -1;
      for (int q = 0; q < k && e >= 0; ++q) {
        if (idx[static_cast<size_t>(t) * K + q] == e) earlier = earlier < 0 ? q : earlier;
      }
      if (e < -1 || e >= E || earlier >= 0) return BadEntry{t, k, earlier, e};
    }
  }
  return b;
}

/// Bytes of the regions a send may write, read back (the symmetric heap of a one-rank world).
std::vector<uint8_t> sendRegions(Fuzz& f, sy_endpoint* ep, const std::string& name) {
  std::vector<uint8_t> all;
  for (int r : {SY_REGION_DISPATCH_SIGNAL, SY_REGION_COUNT_SIGNAL, SY_REGION_DISPATCH_ROUTES, SY_REGION_DISPATCH_X,
                SY_REGION_DISPATCH_SCALES, SY_REGION_RECV_X, SY_REGION_RECV_SCALES}) {
    void* p = nullptr;
    uint64_t n = 0;
    f.expect("sy_endpoint_region", name + ": a region the send writes", SY_OK, sy_endpoint_region(ep, r, &p, &n), ep);
    if (p == nullptr || n == 0) continue;
    const size_t at = all.size();
    all.resize(at + n);
    f.expect("sy_memcpy_to_host", name + ": the region", SY_OK, sy_memcpy_to_host(all.data() + at, p, n));
  }
  return all;
}

/// The case's ids with one bad entry of `kind` (0 above the experts, 1 below -1, 2 a repeat).
std::vector<int32_t> withBadEntry(Fuzz& f, const CaseFile& c, int kind) {
  const int T = static_cast<int>(c.tokens), K = static_cast<int>(c.topK), E = static_cast<int>(c.localExperts);
  std::vector<int32_t> idx(c.idx.size() / 4);
  std::memcpy(idx.data(), c.idx.data(), c.idx.size());
  const int t = f.below(T);
  int32_t* row = &idx[static_cast<size_t>(t) * K];
  if (kind == 2 && K >= 2) {
    const int k = 1 + f.below(K - 1), q = f.below(k);
    row[q] = row[q] >= 0 ? row[q] : f.below(E);
    row[k] = row[q];
  } else {
    row[f.below(K)] = kind == 0 ? E + f.below(1000) : -2 - f.below(1000);
  }
  return idx;
}

bool sameEntry(const sy_error_info& info, const BadEntry& b) {
  return info.code == sy::E_BAD_INPUT && static_cast<int32_t>(info.peer) == b.value &&
         info.detail0 == static_cast<uint32_t>(b.token) && (info.detail1 & 0xffffu) == static_cast<uint32_t>(b.slot) &&
         (info.detail1 >> 16) == static_cast<uint32_t>(b.earlier + 1);
}

const char* const kKind[3] = {"an id above the experts", "an id below -1", "an expert named twice by a token"};

}  // namespace

void badExpertIds(Fuzz& f, World& w) {
  const CaseFile& c = *w.cf;
  const int T = static_cast<int>(c.tokens), K = static_cast<int>(c.topK), E = static_cast<int>(c.localExperts);
  const float* sc = c.inScalesPerRow ? static_cast<float*>(w.scales.p) : nullptr;
  for (int layout : {SY_LAYOUT_MASKED, SY_LAYOUT_CONTIGUOUS}) {
    static sy_layout l;
    const std::string lname = layout == SY_LAYOUT_MASKED ? "masked" : "contiguous";
    if (!f.check("sy_layout_compute", lname + " config of the case", layoutOf(c, layout, &l), l.error)) continue;
    for (int kind = 0; kind < 3 && T > 0; ++kind) {
      for (int stage : {sy::S_DISPATCH_SEND, sy::S_COMBINE_RECV}) {
        const std::string name = lname + ", " + (stage == sy::S_DISPATCH_SEND ? "dispatch send" : "combine recv") +
                                 ": " + kKind[kind];
        const std::vector<int32_t> idx = withBadEntry(f, c, kind);
        const BadEntry want = firstBad(idx, T, K, E);
        if (!f.check("setup", name + ": the ids break the rule", want.token >= 0)) continue;
        std::vector<uint8_t> bytes(idx.size() * 4);
        std::memcpy(bytes.data(), idx.data(), bytes.size());
        Dev bad = upload(f, bytes);
        sy_endpoint* ep = nullptr;
        if (!f.expect("sy_endpoint_create", name + ": an endpoint of its own", SY_OK,
                      sy_endpoint_create(w.rt, l.params, l.param_count, l.symmetric_bytes, 1000000000ull, &ep),
                      w.rt)) {
          sy_device_free(bad.p);
          continue;
        }
        auto* good = static_cast<int32_t*>(w.idx.p);
        auto* wts = static_cast<float*>(w.w.p);
        std::vector<uint8_t> before;
        if (stage == sy::S_DISPATCH_SEND) {
          f.expect("sy_stream_synchronize", name + ": before", SY_OK, sy_stream_synchronize(w.stream));
          before = sendRegions(f, ep, name);
          f.expect("sy_dispatch_send", name + ": enqueued (the kernel checks the ids)", SY_OK,
                   sy_dispatch_send(ep, w.x.p, sc, static_cast<int32_t*>(bad.p), wts, T, w.stream), ep);
        } else {
          f.expect("sy_dispatch_send", name + ": valid", SY_OK, sy_dispatch_send(ep, w.x.p, sc, good, wts, T, w.stream),
                   ep);
          f.expect("sy_dispatch_recv", name + ": valid", SY_OK, sy_dispatch_recv(ep, w.stream), ep);
          f.expect("sy_combine_send", name + ": valid", SY_OK, sy_combine_send(ep, w.out.p, w.stream), ep);
          f.expect("sy_combine_recv", name + ": enqueued (the kernel checks the ids)", SY_OK,
                   sy_combine_recv(ep, static_cast<int32_t*>(bad.p), wts, T, w.y.p, w.stream), ep);
        }
        sy_error_info info{};
        const int rc = sy_endpoint_check(ep, w.stream, &info);
        f.expect("sy_endpoint_check", name, SY_ERR_INVALID_ARGUMENT, rc, ep);
        const std::string m = rc == SY_OK ? "" : sy_last_error(ep);
        f.check("sy_endpoint_check",
                name + ": names token " + std::to_string(want.token) + ", slot " + std::to_string(want.slot) +
                    ", value " + std::to_string(want.value),
                sameEntry(info, want) && info.stage == static_cast<uint32_t>(stage), m);
        f.check("sy_endpoint_check", name + ": the message says which entry",
                m.find("topk_idx[" + std::to_string(want.token) + "]") != std::string::npos, m);
        if (stage == sy::S_DISPATCH_SEND) {
          f.check("sy_dispatch_send", name + ": no region the send writes changed",
                  sendRegions(f, ep, name) == before);
        }
        f.expect("sy_dispatch_send", name + ": after the refused step", SY_ERR_STATE,
                 sy_dispatch_send(ep, w.x.p, sc, good, wts, T, w.stream), ep);
        f.expect("sy_endpoint_destroy", name + ": the endpoint", SY_OK, sy_endpoint_destroy(ep));
        f.expect("sy_device_free", name + ": the ids", SY_OK, sy_device_free(bad.p));
      }
    }
  }
}

void countFaults(Fuzz& f, World& w) {
  const CaseFile& c = *w.cf;
  const int T = static_cast<int>(c.tokens), K = static_cast<int>(c.topK), L = static_cast<int>(c.localExperts);
  const int M = static_cast<int>(c.maxTokens), J = K < L ? K : L;
  const float* sc = c.inScalesPerRow ? static_cast<float*>(w.scales.p) : nullptr;
  for (int layout : {SY_LAYOUT_MASKED, SY_LAYOUT_CONTIGUOUS}) {
    static sy_layout l;
    const std::string lname = layout == SY_LAYOUT_MASKED ? "masked" : "contiguous";
    if (!f.check("sy_layout_compute", lname + " config of the case", layoutOf(c, layout, &l), l.error)) continue;
    for (int kind = 0; kind < (layout == SY_LAYOUT_CONTIGUOUS ? 2 : 1); ++kind) {
      const std::string name = lname + (kind == 0 ? ": a count one row above its records" :
                                                    ": counts adding up to more rows than one source sends");
      if (kind == 1 && L <= J) {
        f.check("setup", name + ": not reachable with localExperts <= topK (each word's bound implies it)", true);
        continue;
      }
      sy_endpoint* ep = nullptr;
      if (!f.expect("sy_endpoint_create", name + ": an endpoint of its own", SY_OK,
                    sy_endpoint_create(w.rt, l.params, l.param_count, l.symmetric_bytes, 1000000000ull, &ep), w.rt)) {
        continue;
      }
      f.expect("sy_dispatch_send", name + ": valid", SY_OK,
               sy_dispatch_send(ep, w.x.p, sc, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), T,
                                w.stream),
               ep);
      f.expect("sy_stream_synchronize", name + ": the counts are written", SY_OK, sy_stream_synchronize(w.stream));
      void* words = nullptr;
      uint64_t bytes = 0;
      f.expect("sy_endpoint_region", name + ": countSignal", SY_OK,
               sy_endpoint_region(ep, SY_REGION_COUNT_SIGNAL, &words, &bytes), ep);
      std::vector<uint32_t> cw(L);  // source 0's words for this rank's experts: [0][e] either way at one rank
      f.expect("sy_memcpy_to_host", name + ": the counts", SY_OK, sy_memcpy_to_host(cw.data(), words, 4 * L));
      uint32_t total = 0;
      int raise = -1;
      for (int e = 0; e < L; ++e) {
        const uint32_t n = (cw[e] & ((1u << 21) - 1)) - 1;
        total += n;
        if (raise < 0 && n < static_cast<uint32_t>(M)) raise = e;
      }
      uint32_t want0 = 0, want1 = 0, wantCode = 0, wantRegion = 0;
      if (kind == 0) {
        cw[raise < 0 ? 0 : raise] += 1;  // the count field is the low bits, its epoch stays
        const bool tooMany = total + 1 > static_cast<uint32_t>(M * J);
        wantCode = tooMany ? sy::E_COUNT_TOO_LARGE : sy::E_COUNT_MISMATCH;
        wantRegion = tooMany ? sy::R_COUNT_SIGNAL : sy::R_DISPATCH_ROUTES;
        want0 = tooMany ? total + 1 : total;
        want1 = tooMany ? static_cast<uint32_t>(M * J) : total + 1;
      } else {
        for (int e = 0; e < L; ++e) cw[e] = (cw[e] & ~((1u << 21) - 1)) | static_cast<uint32_t>(M + 1);
        wantCode = sy::E_COUNT_TOO_LARGE;
        wantRegion = sy::R_COUNT_SIGNAL;
        want0 = static_cast<uint32_t>(L * M);
        want1 = static_cast<uint32_t>(M * J);
      }
      if (!f.check("setup", name + ": a count below maxTokensPerRank to raise", raise >= 0 || kind == 1)) {
        sy_endpoint_destroy(ep);
        continue;
      }
      f.expect("sy_memcpy_to_device", name + ": the corrupted counts", SY_OK,
               sy_memcpy_to_device(words, cw.data(), 4 * L));
      f.expect("sy_dispatch_recv", name + ": enqueued (the kernel finds the fault)", SY_OK,
               sy_dispatch_recv(ep, w.stream), ep);
      if (wantCode == sy::E_COUNT_MISMATCH) {  // found once every record was read: by combine recv's check block
        f.expect("sy_combine_send", name + ": enqueued", SY_OK, sy_combine_send(ep, w.out.p, w.stream), ep);
        f.expect("sy_combine_recv", name + ": enqueued (its check block finds the fault)", SY_OK,
                 sy_combine_recv(ep, static_cast<int32_t*>(w.idx.p), static_cast<float*>(w.w.p), T, w.y.p, w.stream),
                 ep);
      }
      sy_error_info info{};
      const int rc = sy_endpoint_check(ep, w.stream, &info);
      f.expect("sy_endpoint_check", name, SY_ERR_PROTOCOL, rc, ep);
      const std::string m = rc == SY_OK ? "" : sy_last_error(ep);
      f.check("sy_endpoint_check",
              name + ": names source 0, dispatch recv, rows " + std::to_string(want0) + " and " + std::to_string(want1),
              info.code == wantCode && info.stage == sy::S_DISPATCH_RECV && info.peer == 0 &&
                  info.region == wantRegion && info.detail0 == want0 && info.detail1 == want1,
              m);
      f.expect("sy_endpoint_destroy", name + ": the failed endpoint", SY_OK, sy_endpoint_destroy(ep));
    }
  }
}

}  // namespace syfuzz
