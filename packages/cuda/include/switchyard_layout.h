/*
 * switchyard_layout.h: the buffer layout of protocol version 2 in C, host only, no dependencies
 * (no CUDA, no NVSHMEM, no allocation). sy_layout_compute gives every region's offset, size and
 * shape and the parameter block the kernels read, byte for byte what core's computeLayout and
 * layoutParams give for the same config (a property test compares them over generated configs).
 * The specification stays core's (packages/core/src/layout); this is its C mirror for programs
 * that cannot run TypeScript (the Python package, an engine's C++).
 *
 * Versioned structs: the caller sets struct_size = sizeof(the struct as it compiled it), best
 * through sy_config_init / the SY_LAYOUT_INIT macro. The library reads only what fits the
 * caller's size; a larger size is accepted when the bytes it does not know are zero.
 */
#ifndef SWITCHYARD_LAYOUT_H_
#define SWITCHYARD_LAYOUT_H_

#include <stddef.h>
#include <stdint.h>

#include "switchyard_cuda.h" /* sy_status, SY_API, switchyard_contract.h */

#ifdef __cplusplus
extern "C" {
#endif

/* sy_dtype, sy_layout_kind, sy_region_dtype and sy_region_index (SY_REGION_COUNT) are in
 * switchyard_contract.h, generated from core's contract. */

#define SY_LAYOUT_MAX_DIMS 4
#define SY_LAYOUT_MAX_PARAMS 64
#define SY_LAYOUT_ERROR_BYTES 256
/* Every byte count the layout reports is below 2^53 (exact in a double, as core's numbers are);
 * a config whose buffers would not be is refused. */
#define SY_LAYOUT_MAX_BYTES 9007199254740991ull

/* One expert-parallel world (core's EpConfig). Every rank uses the same config. */
typedef struct sy_config {
  size_t struct_size;         /* sizeof(sy_config) as the caller compiled it */
  int64_t ranks;              /* GPUs, one process each, [1, 4096] */
  int64_t dp_size;            /* ranks holding the same tokens, divides ranks (default 1) */
  int64_t experts;            /* routed experts in all, a multiple of ranks, [1, 2^20] */
  int64_t top_k;              /* experts per token, [1, experts] */
  int64_t hidden;             /* elements per token row, [1, 2^20]; a multiple of 128 for fp8 */
  int64_t max_tokens_per_rank;/* most tokens one rank passes in a step, [1, 2^21 - 2] */
  int64_t expert_alignment;   /* contiguous: rows each expert block is padded to, [1, 2^16] (default 1) */
  int32_t input_dtype;        /* sy_dtype of x handed to dispatch (default bf16) */
  int32_t dispatch_dtype;     /* sy_dtype delivered to the experts (default bf16) */
  int32_t layout;             /* sy_layout_kind (default masked) */
  int32_t scale_format;       /* sy_scale_format of fp8-e4m3 dispatch (default pow2); fp8 dispatch only */
  int32_t combine_weights;    /* sy_combine_weights (default expert); home needs the masked layout */
} sy_config;

/* One region of a rank's buffers (core's Region). Unused regions have bytes 0, offset 0, shape [0]. */
typedef struct sy_region {
  const char* name;    /* core's region name, e.g. "recvX" (static storage) */
  uint64_t offset;     /* bytes from the start of its heap (symmetric or local) */
  uint64_t bytes;      /* product(shape) * element bytes */
  uint32_t align;      /* every region starts at a multiple of this (256) */
  int32_t dtype;       /* sy_region_dtype */
  int32_t symmetric;   /* 1: in the symmetric heap (peers write into it), 0: local */
  int32_t shape_dims;  /* entries of shape in use ([0] for an unused region: 1) */
  int32_t axis_count;  /* entries of axes in use (an unused region's shape is [0], its axes stay) */
  uint64_t shape[SY_LAYOUT_MAX_DIMS];       /* elements, outermost first */
  const char* axes[SY_LAYOUT_MAX_DIMS];     /* axis names, outermost first (static storage) */
} sy_region;

/* A rank's layout for one config (core's Layout) and its parameter block (core's layoutParams). */
typedef struct sy_layout {
  size_t struct_size;          /* sizeof(sy_layout) as the caller compiled it */
  uint64_t rows;               /* row slots of the dispatch output: masked L*R*M, contiguous N */
  uint64_t rows_per_source;    /* M*J: most output rows one source fills on one rank */
  uint64_t slots_per_rank;     /* J = min(K, L) */
  uint64_t route_words;        /* W = 2 + 4*J */
  uint64_t symmetric_bytes;    /* symmetric heap every rank allocates */
  uint64_t local_bytes;        /* local buffers a rank allocates */
  uint64_t bytes_per_rank;     /* symmetric_bytes + local_bytes */
  sy_region regions[SY_REGION_COUNT];     /* by sy_region_index */
  int32_t placement[SY_REGION_COUNT];     /* region indices in the order they were placed, then -1 */
  size_t param_count;                     /* values of params in use */
  uint64_t params[SY_LAYOUT_MAX_PARAMS];  /* core's layoutParams, in sy_layout_param_name order */
  const char* error_field;     /* after a refusal: the config field at fault ("experts"), else NULL */
  char error[SY_LAYOUT_ERROR_BYTES];      /* after a refusal: core's ConfigError message */
} sy_layout;

/* Defaults of core's defineConfig (dp_size 1, bf16 in and out, masked, alignment 1), the required
 * fields 0 (so a config left unset is refused), struct_size set. */
SY_API void sy_config_init(sy_config* config);

/* Validates the config as core's validateConfig does (same rules, same order, same message) and
 * computes the layout and parameter block. SY_OK, or SY_ERR_INVALID_ARGUMENT with out->error and
 * out->error_field set (a NULL pointer or a bad struct_size: SY_ERR_INVALID_ARGUMENT, out->error
 * set when out is usable). Pure: no global state, safe from any thread. */
SY_API int sy_layout_compute(const sy_config* config, sy_layout* out);

/* The name of parameter i ("ranks", ..., "recvMeta.bytes"; core's PARAM_NAMES), NULL past the end. */
SY_API const char* sy_layout_param_name(size_t i);
/* Parameters of the block (core's PARAM_NAMES.length). */
SY_API size_t sy_layout_param_count(void);

/* The memory report (core's describeLayout): one line per used region and the totals, NUL
 * terminated. Returns the bytes the full text needs, NUL included; writes at most `capacity`
 * (truncated, still terminated, when short). */
SY_API size_t sy_layout_describe(const sy_layout* layout, char* text, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_LAYOUT_H_ */
