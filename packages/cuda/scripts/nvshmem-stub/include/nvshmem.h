/* Declarations-only stand-in for NVSHMEM's headers, used by scripts/check-native.sh to compile
 * (never link) the native sources on machines without NVSHMEM. Only what Switchyard calls. */
#pragma once
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  int version;
  char internal[124];
} nvshmemx_uniqueid_t;
#define NVSHMEMX_UNIQUEID_INITIALIZER {(1 << 16) + (int)sizeof(nvshmemx_uniqueid_t), {0}}

typedef struct {
  int version;
  char pad[252];
} nvshmemx_init_attr_t;
#define NVSHMEMX_INIT_ATTR_INITIALIZER {0, {0}}

typedef int nvshmem_team_t;
#define NVSHMEMX_TEAM_NODE 2
enum { NVSHMEMX_INIT_WITH_UNIQUEID = 1 << 3 };

int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t* uniqueid);
int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks, const nvshmemx_uniqueid_t* uniqueid,
                                    nvshmemx_init_attr_t* attr);
int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t* attributes);
void nvshmem_finalize(void);
__host__ __device__ int nvshmem_my_pe(void);
__host__ __device__ int nvshmem_n_pes(void);
__host__ __device__ int nvshmem_team_n_pes(nvshmem_team_t team);
void* nvshmem_malloc(size_t size);
void nvshmem_free(void* ptr);
__host__ __device__ void* nvshmem_ptr(const void* dest, int pe);
void nvshmem_barrier_all(void);
void nvshmemx_barrier_all_on_stream(cudaStream_t stream);
__host__ __device__ void nvshmem_quiet(void);
__host__ __device__ void nvshmem_fence(void);
__device__ void nvshmem_putmem_nbi(void* dest, const void* source, size_t bytes, int pe);
__device__ void nvshmemx_putmem_nbi_block(void* dest, const void* source, size_t bytes, int pe);
__device__ void nvshmemx_putmem_nbi_warp(void* dest, const void* source, size_t bytes, int pe);
__device__ void nvshmem_uint32_atomic_set(uint32_t* dest, uint32_t value, int pe);
