// The C ABI fuzzer's GPU world (abi_fuzz_endpoint.cc drives it, abi_fuzz_misuse.cc adds the calls
// that need no step): a one-rank runtime on GPU 0, a stream, the main endpoint and the step's
// buffers made through the ABI's own helpers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "abi_fuzz.h"
#include "switchyard_layout.h"

namespace syfuzz {

/// Device buffer made through the ABI's own helpers.
struct Dev {
  void* p = nullptr;
  size_t n = 0;
  uint8_t* b() const { return static_cast<uint8_t*>(p); }
};

/// The world: runtime, stream, the main endpoint and the step's buffers; `phase` mirrors the endpoint's.
struct World {
  const CaseFile* cf = nullptr;
  sy_runtime* rt = nullptr;
  sy_endpoint* ep = nullptr;
  void* stream = nullptr;
  Dev x, scales, idx, w, out, y, shortBuf, other;
  std::vector<uint8_t> lastY;  // what y holds now (sentinel or the last valid step's output)
  int phase = 0;
  int steps = 0;
  bool stats = false;
  int T() const { return static_cast<int>(cf->tokens); }
};

/// A device copy of `host` (or `bytes` bytes when given), made with sy_device_alloc / sy_memcpy_to_device.
Dev upload(Fuzz& f, const std::vector<uint8_t>& host, size_t bytes = 0);
bool createEndpoint(Fuzz& f, World& w, const char* why);
/// The next valid call of the step; after combine recv, y and the counts against the case file.
void advance(Fuzz& f, World& w);

/// Calls that need no step (abi_fuzz_misuse.cc): creation with bad parameters, queries with bad
/// indices and wrong-kind handles, a destroyed endpoint, protocol faults.
void endpointCreation(Fuzz& f, World& w);
void endpointQueries(Fuzz& f, World& w);
void destroyedEndpoint(Fuzz& f, World& w);
void protocolFault(Fuzz& f, World& w);
void takenRowFault(Fuzz& f, World& w);
/// The case's config with `layout` (contiguous: expertAlignment 4), through the C layout.
bool layoutOf(const CaseFile& c, int layout, sy_layout* out);

/// Bad inputs the device finds and counts that disagree with the records (abi_fuzz_inputs.cc).
void badExpertIds(Fuzz& f, World& w);
void countFaults(Fuzz& f, World& w);

}  // namespace syfuzz
