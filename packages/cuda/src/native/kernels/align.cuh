// Rounding a row count up to a multiple (the contiguous layout's expertAlignment), host and device.
#pragma once

namespace sy {

/// n rounded up to a multiple of a; n itself for a <= 1.
__host__ __device__ inline int alignUpInt(int n, int a) { return a <= 1 ? n : (n + a - 1) / a * a; }

}  // namespace sy
