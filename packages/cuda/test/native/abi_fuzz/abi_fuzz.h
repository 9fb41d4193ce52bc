// The C ABI fuzzer (abi_fuzz.cc, abi_fuzz_endpoint.cc): a host program linked against the
// library's objects that calls every function of include/switchyard_cuda.h with bad arguments and
// checks each answer; with SY_ABI_FUZZ_BENCH, those of the bench library's switchyard_bench.h too
// (abi_fuzz_bench.cc). Every call is one JSON line on stdout, as it happens (a crash leaves the
// last call it survived on the screen); the last line is the summary. Exit status 0 when every
// call answered as documented, 1 otherwise.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "switchyard_cuda.h"

namespace syfuzz {

const char* statusName(int status);

/// One step's inputs and expected outputs, written by `node dist/cli.js abi-fuzz` from core's
/// reference (src/checks/abiFuzz.ts writes the format; see readCase in abi_fuzz.cc).
struct CaseFile {
  std::vector<uint64_t> params;
  uint64_t symmetricBytes = 0;
  uint32_t tokens = 0, hidden = 0, topK = 0, localExperts = 0, ranks = 0, maxTokens = 0;
  uint32_t inElemBytes = 0, inScalesPerRow = 0;
  uint64_t rows = 0;
  std::vector<uint8_t> x, scales, idx, weights, expertOut, wantCounts, wantY;
};

/// Reads a case file; false (with a reason on stderr) when it is missing or malformed.
bool readCase(const char* path, CaseFile& out);

class Fuzz {
 public:
  Fuzz(uint64_t seed, bool gpu) : rng_(seed ? seed : 1), gpu_(gpu) {}
  /// One ABI call: `got` must equal `want`. A refusal must leave a message in sy_last_error(handle)
  /// (and the thread's slot); for SY_ERR_INVALID_ARGUMENT, SY_ERR_STATE and SY_ERR_PHASE the message
  /// must name the function (so it is this call's, not an older one). With a GPU, no call may leave
  /// an error in CUDA's per-thread last-error slot (the next launch would report it as its own).
  /// Returns got == want.
  /// `lastError` reads the message: sy_last_error for the product's calls, sy_bench_last_error for the bench library's.
  using LastError = const char* (*)(const void*);
  bool expect(const char* call, const std::string& what, int want, int got, const void* handle = nullptr,
              LastError lastError = sy_last_error);
  /// A fact that is not a status (outputs, counts, untouched buffers).
  bool check(const char* call, const std::string& what, bool ok, const std::string& detail = "");
  uint64_t next() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  int failures() const { return failures_; }
  int calls() const { return calls_; }
  /// Prints the summary line; returns the exit status.
  int finish(const std::string& mode, uint64_t seed);

 private:
  void line(const char* call, const std::string& what, const std::string& want, const std::string& got, bool ok,
            const std::string& message);
  uint64_t rng_;
  bool gpu_;
  int calls_ = 0, failures_ = 0, refused_ = 0, accepted_ = 0;
  std::map<std::string, int> refusedBy_;
};

/// Calls that need no GPU: library strings, NULL and never-created handles, helper arguments.
void libraryCases(Fuzz& f, bool gpu);
#if SY_ABI_FUZZ_BENCH
struct World;
/// The bench library's (abi_fuzz_bench.cc): the calls that need no GPU, and those on a live runtime.
void benchCases(Fuzz& f, bool gpu);
void benchRuntimeCases(Fuzz& f, World& w);
#endif
/// Everything else on a one-rank world on GPU 0 (abi_fuzz_endpoint.cc): runtime and endpoint
/// creation, every phase with bad arguments and out of order, random sequences of both between
/// valid steps checked against the case file, stats, destroyed handles, a protocol fault.
void endpointCases(Fuzz& f, const CaseFile& cf, int iterations);

}  // namespace syfuzz
