// The probes' check of a CUDA runtime call in main: prints the call, where it is and the error,
// and returns 1 from main.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::printf("%s:%d %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));          \
      return 1;                                                                                     \
    }                                                                                               \
  } while (0)
