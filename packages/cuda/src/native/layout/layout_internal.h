/* Shared by the layout's C files; not installed, not exported. */
#ifndef SWITCHYARD_LAYOUT_INTERNAL_H_
#define SWITCHYARD_LAYOUT_INTERNAL_H_

#include "switchyard_layout.h"

/* Every region starts at a multiple of this many bytes (core's REGION_ALIGN). */
#define SY_REGION_ALIGN 256u
/* fp8 payloads carry one fp32 scale per this many elements (core's FP8_BLOCK). */
#define SY_FP8_BLOCK 128
/* Largest count a signal word carries (core's MAX_SIGNAL_COUNT): 21 bits hold count + 1. */
#define SY_MAX_SIGNAL_COUNT ((1 << 21) - 2)

/* Core's validateConfig: 0, or SY_ERR_INVALID_ARGUMENT with out->error / error_field set. */
int sy_layout_validate_(const sy_config* c, sy_layout* out);
/* Formats out->error (printf style) and sets out->error_field; returns SY_ERR_INVALID_ARGUMENT. */
int sy_layout_refuse_(sy_layout* out, const char* field, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Core's name of a dtype ("bf16", "fp8-e4m3"), or NULL. */
const char* sy_dtype_name_(int32_t dtype);
/* Core's name of a region dtype ("u32", ...). */
const char* sy_region_dtype_name_(int32_t dtype);
/* Core's REGION_NAMES[i]. */
const char* sy_region_name_(int i);

#endif /* SWITCHYARD_LAYOUT_INTERNAL_H_ */
