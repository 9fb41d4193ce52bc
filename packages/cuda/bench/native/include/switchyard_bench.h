/*
 * switchyard_bench.h: the C ABI of libswitchyard_cuda_bench.so, what `switchyard bench` measures
 * beside the product: the NCCL all-to-all baseline, device-side random inputs, peer-write bandwidth.
 * Not part of the product (libswitchyard_cuda.so exports none of this); built when CMake's
 * SY_BUILD_BENCH is ON (the repository's default), linked against libswitchyard_cuda.so and NCCL.
 *
 * Conventions are the product's (switchyard_cuda.h): every function returns an int status, nothing
 * is thrown across the ABI and the library never exits; handles are opaque ids never reused (NULL is
 * SY_ERR_INVALID_ARGUMENT, a destroyed or foreign one SY_ERR_STATE). Messages of this library's
 * failures are sy_bench_last_error(handle), not sy_last_error. Exported: exactly the SY_API functions
 * below (bench/native/exports.map).
 */
#ifndef SWITCHYARD_BENCH_H_
#define SWITCHYARD_BENCH_H_

#include <stddef.h>
#include <stdint.h>

#include "switchyard_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sy_nccl sy_nccl;         /* one per process: the NCCL communicator of the baseline */
typedef struct sy_baseline sy_baseline; /* one rank's buffers of the NCCL baseline for one config */

/* The message of the last failure on `handle` (a sy_nccl* or sy_baseline*), or of this thread in
 * this library when NULL. */
SY_API const char* sy_bench_last_error(const void* handle);

/* Peer-copy bandwidth over the runtime's NVSHMEM world: every rank writes `bytes` (a multiple of 16)
 * into each store-reachable peer's symmetric memory with 16-byte stores (all peers at once), `iters`
 * times; *gbps is bytes written by this rank per second, in GB/s (1e9). Collective. */
SY_API int sy_bench_peer_write(sy_runtime* rt, size_t bytes, int iters, double* gbps);

/* cudaMemGetInfo of the current device. */
SY_API int sy_mem_get_info(uint64_t* free_bytes, uint64_t* total_bytes);
/* `count` random elements at `ptr`, deterministic per (seed, index), on `stream`. kind: 0 bf16 with
 * magnitudes over 17 binades per 128-block, 1 fp8-e4m3 bits (no NaN), 2 fp32 powers of two, 3 bf16 in [-3, 3]. */
SY_API int sy_fill_random(void* ptr, uint64_t count, int kind, uint64_t seed, void* stream);

/* NCCL baseline (the bench's "plain way"): count exchange, host synchronisation, grouped
 * ncclSend / ncclRecv with splits (one row per (token, expert)), the reverse for combine and the
 * weighted sum in protocol version 2's order, so its outputs equal core's reference. NCCL needs one
 * GPU per rank (several ranks on one GPU: sy_nccl_create fails). SY_ERR_UNSUPPORTED when the
 * library was built without NCCL; SY_ERR_NCCL on NCCL failures. NCCL_NVLS_ENABLE=0 is forced in
 * the process. */
SY_API int sy_nccl_get_unique_id(uint8_t out[SY_UNIQUE_ID_BYTES]);
SY_API int sy_nccl_create(const uint8_t unique_id[SY_UNIQUE_ID_BYTES], int rank, int ranks, int device, sy_nccl** out);
SY_API int sy_nccl_version(const sy_nccl* nc, int* version);
SY_API int sy_nccl_destroy(sy_nccl* nc);
/* params: core's layoutParams of the config with layout "contiguous" (SY_PARAM_COUNT values); dpSize 1. */
SY_API int sy_baseline_create(sy_nccl* nc, const uint64_t* params, size_t count, sy_baseline** out);
SY_API int sy_baseline_destroy(sy_baseline* bl);
/* Blocks the host for the count exchange. Output in the contiguous layout's recvX / recvScales / recvMeta. */
SY_API int sy_baseline_dispatch(sy_baseline* bl, const void* x, const float* scales, const int32_t* topk_idx,
                                int num_tokens, void* stream);
SY_API int sy_baseline_combine(sy_baseline* bl, const void* expert_out, const int32_t* topk_idx,
                               const float* topk_weights, int num_tokens, void* y, void* stream);
/* Local output regions (recvX, recvScales, recvMeta: index in REGION_NAMES), counts [L, R] int32, memory. */
SY_API int sy_baseline_region(const sy_baseline* bl, int region, void** ptr, uint64_t* bytes);
SY_API int sy_baseline_counts(const sy_baseline* bl, const int32_t** counts);
SY_API int sy_baseline_memory(const sy_baseline* bl, uint64_t* device_bytes);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_BENCH_H_ */
