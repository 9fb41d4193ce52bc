// The probes' timing of a kernel launch: the median of 9 timed launches after 3 warm-up, each
// between two CUDA events on the default stream, in µs.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

template <typename Launch>
float medianUs(Launch launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 12; ++i) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (i >= 3) t.push_back(ms * 1000.0f);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
