// Validation of the parameter block sy_endpoint_create and sy_baseline_create take (core's layoutParams), host only:
// no CUDA call, so CPU tests run it (test/native/host/params_check_test.cc).
#pragma once
#include <cstddef>
#include <cstdint>

namespace sy {

/// Throws SY_ERR_INVALID_ARGUMENT naming the first parameter at fault unless `params` (`count`
/// values) is exactly the block the C layout computes from its own scalars; returns that layout's
/// symmetricBytes. `call` starts the message. `localRegions` (if not null): bit r set where that
/// layout places region r outside the symmetric heap (SyParams::localRegions).
uint64_t validateParamBlock(const uint64_t* params, size_t count, const char* call, uint32_t* localRegions = nullptr);

/// validateParamBlock, and every symmetric region ends within `symmetricBytes`.
void validateParams(const uint64_t* params, size_t count, uint64_t symmetricBytes, const char* call,
                    uint32_t* localRegions = nullptr);

}  // namespace sy
