// STUB, FOR CPU TESTS ONLY: definitions of the declarations in include/nvshmem.h that fail like a
// machine without NVSHMEM would, so scripts/check-native.sh can link the C ABI fuzzer
// (test/native/abi_fuzz/abi_fuzz*.cc) and both libraries on a CPU machine and run its library-level half. Never part
// of the real build (scripts/build-native.sh links the real libnvshmem_host / libnvshmem_device).
#include "nvshmem.h"

int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t*) { return 1; }
int nvshmemx_set_attr_uniqueid_args(const int, const int, const nvshmemx_uniqueid_t*, nvshmemx_init_attr_t*) {
  return 1;
}
int nvshmemx_init_attr(unsigned int, nvshmemx_init_attr_t*) { return 1; }
void nvshmem_finalize(void) {}
__host__ __device__ int nvshmem_my_pe(void) { return -1; }
__host__ __device__ int nvshmem_n_pes(void) { return 0; }
__host__ __device__ int nvshmem_team_n_pes(nvshmem_team_t) { return 0; }
void* nvshmem_malloc(size_t) { return nullptr; }
void nvshmem_free(void*) {}
__host__ __device__ void* nvshmem_ptr(const void*, int) { return nullptr; }
void nvshmem_barrier_all(void) {}
void nvshmemx_barrier_all_on_stream(cudaStream_t) {}
__host__ __device__ void nvshmem_quiet(void) {}
__host__ __device__ void nvshmem_fence(void) {}
__device__ void nvshmem_putmem_nbi(void*, const void*, size_t, int) {}
__device__ void nvshmemx_putmem_nbi_block(void*, const void*, size_t, int) {}
__device__ void nvshmemx_putmem_nbi_warp(void*, const void*, size_t, int) {}
__device__ void nvshmem_uint32_atomic_set(uint32_t*, uint32_t, int) {}
