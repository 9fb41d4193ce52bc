// validateParams and validateParamBlock (src/native/host/params_check.cc) against blocks that would make the kernels write
// outside their regions: each must be refused with SY_ERR_INVALID_ARGUMENT naming the parameter.
#include <cstring>
#include <string>
#include <vector>

#include "../../../src/native/host/params_check.h"
#include "../../../src/native/host/status_error.h"
#include "check.h"
#include "switchyard_layout.h"

namespace {

struct Block {
  std::vector<uint64_t> v;
  uint64_t symmetricBytes = 0;
};

Block layoutOf(int64_t ranks, int64_t experts, int32_t layout) {
  sy_config c;
  sy_config_init(&c);
  c.ranks = ranks;
  c.experts = experts;
  c.top_k = 2;
  c.hidden = 256;
  c.max_tokens_per_rank = 16;
  c.layout = layout;
  sy_layout l;
  std::memset(&l, 0, sizeof l);
  l.struct_size = sizeof l;
  if (sy_layout_compute(&c, &l) != SY_OK) std::printf("layout refused: %s\n", l.error);
  return Block{std::vector<uint64_t>(l.params, l.params + l.param_count), l.symmetric_bytes};
}

size_t indexOf(const char* name) {
  for (size_t i = 0; i < sy_layout_param_count(); ++i) {
    if (std::strcmp(sy_layout_param_name(i), name) == 0) return i;
  }
  std::printf("no parameter %s\n", name);
  return 0;
}

/// The status validateParams gives `b`, and its message in `*message`.
int statusOf(const Block& b, std::string* message) {
  try {
    sy::validateParams(b.v.data(), b.v.size(), b.symmetricBytes, "test");
    return SY_OK;
  } catch (const sy::Error& e) {
    *message = e.what();
    return e.status();
  }
}

/// `b` with `name` set to `value` must be refused naming `expect` (a parameter name).
void refused(const char* what, Block b, const char* name, uint64_t value, const char* expect) {
  b.v[indexOf(name)] = value;
  std::string message;
  const int status = statusOf(b, &message);
  CHECK(status == SY_ERR_INVALID_ARGUMENT, what);
  CHECK(message.find(expect) != std::string::npos, what);
  if (status == SY_ERR_INVALID_ARGUMENT && message.find(expect) == std::string::npos) {
    std::printf("  message: %s\n", message.c_str());
  }
}

}  // namespace

int main() {
  const Block masked = layoutOf(2, 8, SY_LAYOUT_MASKED);
  const Block contiguous = layoutOf(4, 8, SY_LAYOUT_CONTIGUOUS);
  std::string message;
  CHECK(statusOf(masked, &message) == SY_OK, "core's masked block is accepted");
  CHECK(statusOf(contiguous, &message) == SY_OK, "core's contiguous block is accepted");
  Block extra = masked;
  extra.symmetricBytes += 4096;
  CHECK(statusOf(extra, &message) == SY_OK, "a larger symmetric heap is accepted");

  const uint64_t x = masked.v[indexOf("dispatchX.offset")];
  const uint64_t wrap = ~uint64_t{0} - 255;  // 256-aligned, offset + bytes wraps around 2^64
  refused("an offset that wraps around 2^64", masked, "dispatchX.offset", wrap, "dispatchX.offset");
  refused("a region far smaller than the scalars imply", masked, "dispatchX.bytes", 256, "dispatchX.bytes");
  refused("regions overlapping", masked, "combineX.offset", x, "combineX.offset");
  refused("ranks above 2^32 (truncated to 2)", masked, "ranks", (uint64_t{1} << 32) + 2, "ranks");
  refused("tokens above 2^32", masked, "maxTokensPerRank", (uint64_t{1} << 32) + 16, "maxTokensPerRank");
  refused("hidden above 2^32", masked, "hidden", (uint64_t{1} << 32) + 256, "hidden");
  Block wraps = masked;  // 2 x 2^31 local experts: the int product wraps to 0 = experts
  wraps.v[indexOf("experts")] = 0;
  refused("local experts whose product with ranks wraps", wraps, "localExperts", uint64_t{1} << 31, "experts");
  refused("a flag that is not 0 or 1", masked, "layoutContiguous", 2, "layoutContiguous");
  refused("rows not the scalars'", masked, "rows", masked.v[indexOf("rows")] * 2, "rows");
  refused("a local region's bytes not the scalars'", masked, "recvMeta.bytes", 1 << 30, "recvMeta.bytes");
  Block small = masked;
  small.symmetricBytes = 256;
  std::string m;
  CHECK(statusOf(small, &m) == SY_ERR_INVALID_ARGUMENT && m.find("symmetric") != std::string::npos,
        "a symmetric heap smaller than the regions");
  Block shortBlock = masked;
  shortBlock.v.pop_back();
  CHECK(statusOf(shortBlock, &m) == SY_ERR_INVALID_ARGUMENT, "a short block");
  // The baseline's check (no symmetric heap of its own): the block alone, its layout's size back.
  CHECK(sy::validateParamBlock(contiguous.v.data(), contiguous.v.size(), "test") == contiguous.symmetricBytes,
        "validateParamBlock returns the layout's symmetricBytes");
  Block forged = contiguous;
  forged.v[indexOf("recvX.bytes")] /= 2;
  try {
    sy::validateParamBlock(forged.v.data(), forged.v.size(), "sy_baseline_create");
    CHECK(false, "a forged block is refused by validateParamBlock");
  } catch (const sy::Error& e) {
    CHECK(e.status() == SY_ERR_INVALID_ARGUMENT && std::string(e.what()).find("recvX.bytes") != std::string::npos,
          "a forged block is refused by validateParamBlock, naming the parameter");
  }
  CHECK(sy_layout_param_count() == SY_PARAM_COUNT, "the C layout's block is SY_PARAM_COUNT values");
  std::printf("params_check_test: %d failure(s)\n", checkFailures());
  return checkFailures() == 0 ? 0 : 1;
}
