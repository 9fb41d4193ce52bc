// What the NCCL baseline's kernels receive (baseline.cu, route.cu, quantize.cu), passed by value.
// The product's SyCtx is the endpoint's; this is the baseline's own.
#pragma once
#include <cstdint>

#include "../../../src/native/kernels/params.cuh"
#include "contiguous.cuh"

namespace sy {

struct BaselineCtx {
  SyParams p;           ///< core's layoutParams of the contiguous layout
  int rank;
  SyContig contig;      ///< route scratch and receive tables (contiguous.cuh)
  int32_t* counts;      ///< [L, R] rows each source sends each local expert (device)
  uint8_t* quantX;      ///< [M, hidden] quantised tokens (fp8 dispatch of bf16 input, else null)
  float* quantScales;   ///< [M, hidden / 128] their scales
};

}  // namespace sy
