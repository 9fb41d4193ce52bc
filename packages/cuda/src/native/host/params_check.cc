// The block sy_endpoint_create (and sy_baseline_create) takes is trusted by the kernels byte for byte, so it is compared
// with the C layout's own (src/native/layout): the scalars are bounded, turned back into a config,
// the layout recomputed, and every value of the block must equal it. No arithmetic on the
// caller's numbers happens before they are bounded, so nothing here can wrap.
#include "params_check.h"

#include <cstring>

#include "../kernels/params.cuh"
#include "status_error.h"
#include "switchyard_layout.h"

namespace sy {

namespace {

/// Scalars bounded before any arithmetic (the layout's own limits are far lower).
constexpr uint64_t kMaxScalar = uint64_t{1} << 31;

sy_config configOf(const uint64_t* v) {
  sy_config c;
  sy_config_init(&c);
  c.ranks = static_cast<int64_t>(v[P_RANKS]);
  c.dp_size = static_cast<int64_t>(v[P_DP_SIZE]);
  c.experts = static_cast<int64_t>(v[P_RANKS] * v[P_LOCAL_EXPERTS]);  // both < 2^31: no wrap
  c.top_k = static_cast<int64_t>(v[P_TOPK]);
  c.hidden = static_cast<int64_t>(v[P_HIDDEN]);
  c.max_tokens_per_rank = static_cast<int64_t>(v[P_MAX_TOKENS]);
  c.expert_alignment = static_cast<int64_t>(v[P_EXPERT_ALIGNMENT]);
  c.input_dtype = v[P_INPUT_FP8] != 0 ? SY_DTYPE_FP8_E4M3 : SY_DTYPE_BF16;
  c.dispatch_dtype = v[P_DISPATCH_ELEM_BYTES] == 1 ? SY_DTYPE_FP8_E4M3 : SY_DTYPE_BF16;
  c.layout = v[P_LAYOUT_CONTIGUOUS] != 0 ? SY_LAYOUT_CONTIGUOUS : SY_LAYOUT_MASKED;
  c.scale_format = static_cast<int32_t>(v[P_SCALE_FORMAT]);
  c.combine_weights = v[P_COMBINE_AT_HOME] != 0 ? SY_COMBINE_WEIGHTS_HOME : SY_COMBINE_WEIGHTS_EXPERT;
  return c;
}

}  // namespace

uint64_t validateParamBlock(const uint64_t* params, size_t count, const char* call, uint32_t* localRegions) {
  SY_REQUIRE(params != nullptr && count == static_cast<size_t>(kParamCount),
             call << ": expected " << kParamCount << " parameters (core's PARAM_NAMES), got " << count);
  static_assert(kParamCount <= SY_LAYOUT_MAX_PARAMS, "the C layout's block holds every parameter");
  for (int i : {P_RANKS, P_LOCAL_EXPERTS, P_MAX_TOKENS, P_HIDDEN, P_TOPK, P_DP_SIZE, P_EXPERT_ALIGNMENT}) {
    SY_REQUIRE(params[i] >= 1 && params[i] <= kMaxScalar, call << ": parameter " << sy_layout_param_name(i) << " is "
                                                               << params[i] << ", outside [1, 2^31]");
  }
  SY_REQUIRE(params[P_SCALE_FORMAT] <= SY_SCALE_UE8M0,
             call << ": parameter scaleFormat is " << params[P_SCALE_FORMAT] << ", not a sy_scale_format");
  for (int i : {P_LAYOUT_CONTIGUOUS, P_QUANTIZE, P_INPUT_FP8, P_COMBINE_AT_HOME}) {
    SY_REQUIRE(params[i] <= 1, call << ": parameter " << sy_layout_param_name(i) << " is " << params[i] << ", not 0 or 1");
  }
  SY_REQUIRE(params[P_DISPATCH_ELEM_BYTES] == 1 || params[P_DISPATCH_ELEM_BYTES] == 2,
             call << ": parameter dispatchElemBytes is " << params[P_DISPATCH_ELEM_BYTES] << ", not 1 or 2");
  const sy_config config = configOf(params);
  sy_layout layout;
  std::memset(&layout, 0, sizeof layout);
  layout.struct_size = sizeof layout;
  if (sy_layout_compute(&config, &layout) != SY_OK) {
    SY_THROW(SY_ERR_INVALID_ARGUMENT, call << ": the block's scalars are no valid config ("
                                           << (layout.error_field ? layout.error_field : "config")
                                           << "): " << layout.error);
  }
  SY_REQUIRE(layout.param_count == count, call << ": the layout has " << layout.param_count << " parameters, not " << count);
  for (size_t i = 0; i < count; ++i) {
    SY_REQUIRE(params[i] == layout.params[i], call << ": parameter " << sy_layout_param_name(i) << " is " << params[i]
                                                   << ", the layout of the block's scalars has " << layout.params[i]
                                                   << " (pass core's layoutParams unchanged)");
  }
  if (localRegions != nullptr) {
    *localRegions = 0;
    for (int k = 0; k < SY_REGION_COUNT && layout.placement[k] >= 0; ++k) {
      const int r = layout.placement[k];
      if (layout.regions[r].symmetric == 0) *localRegions |= 1u << r;
    }
  }
  return layout.symmetric_bytes;
}

void validateParams(const uint64_t* params, size_t count, uint64_t symmetricBytes, const char* call,
                    uint32_t* localRegions) {
  const uint64_t need = validateParamBlock(params, count, call, localRegions);
  SY_REQUIRE(symmetricBytes >= need,
             call << ": symmetric_bytes " << symmetricBytes << " is less than the layout's symmetricBytes " << need);
}

}  // namespace sy
