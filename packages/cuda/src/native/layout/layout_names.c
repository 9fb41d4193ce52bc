/* Names (regions, dtypes, the parameter block's order) and the memory report (core's
 * describeLayout, packages/core/src/layout/params.ts), character for character. */
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

/* The tables below are built from switchyard_contract.h's lists, generated from core's contract. */
#define SY_NAME_OF(index, id, name) name,
#define SY_PARAMS_OF(index, id, name) name ".offset", name ".bytes",

static const char* const kRegionNames[SY_REGION_COUNT] = {SY_CONTRACT_REGIONS(SY_NAME_OF)};

/* Core's SCALAR_PARAMS, then "<region>.offset", "<region>.bytes" for every region. */
static const char* const kScalarParams[] = {SY_CONTRACT_SCALAR_PARAMS(SY_NAME_OF)};
#define SCALAR_COUNT (sizeof kScalarParams / sizeof kScalarParams[0])

static const char* const kRegionParams[2 * SY_REGION_COUNT] = {SY_CONTRACT_REGIONS(SY_PARAMS_OF)};

static const char* const kRegionDtypeNames[] = {SY_CONTRACT_REGION_DTYPES(SY_NAME_OF)};
#define REGION_DTYPE_COUNT (int32_t)(sizeof kRegionDtypeNames / sizeof kRegionDtypeNames[0])

#undef SY_NAME_OF
#undef SY_PARAMS_OF

const char* sy_region_name_(int i) { return i >= 0 && i < SY_REGION_COUNT ? kRegionNames[i] : NULL; }

const char* sy_region_dtype_name_(int32_t dtype) {
  return dtype >= 0 && dtype < REGION_DTYPE_COUNT ? kRegionDtypeNames[dtype] : "?";
}

size_t sy_layout_param_count(void) { return SCALAR_COUNT + 2 * SY_REGION_COUNT; }

const char* sy_layout_param_name(size_t i) {
  if (i < SCALAR_COUNT) return kScalarParams[i];
  if (i < SCALAR_COUNT + 2 * SY_REGION_COUNT) return kRegionParams[i - SCALAR_COUNT];
  return NULL;
}

/* Appends to a bounded buffer, counting what the whole text needs. */
typedef struct text_sink {
  char* text;
  size_t capacity, need;
} text_sink;

static void put(text_sink* s, const char* str) {
  const size_t n = strlen(str);
  if (s->need < s->capacity) {
    const size_t room = s->capacity - 1 - s->need;
    memcpy(s->text + s->need, str, n < room ? n : room);
  }
  s->need += n;
}

/* Core's `(b / 2 ** 20).toFixed(2) + " MiB"`: the exact quotient, ties away from zero, so a
 * region of 2^17 bytes reads 0.13 (printf's %.2f would round it to even, 0.12). */
static void put_mib(text_sink* s, uint64_t bytes) {
  const uint64_t hundredths = (bytes * 100 + (1u << 19)) >> 20;
  char buf[48];
  snprintf(buf, sizeof buf, "%llu.%02llu MiB", (unsigned long long)(hundredths / 100),
           (unsigned long long)(hundredths % 100));
  put(s, buf);
}

/* `str` padded with spaces to `width` characters (String.padEnd). */
static void put_padded(text_sink* s, const char* str, size_t width) {
  put(s, str);
  for (size_t n = strlen(str); n < width; ++n) put(s, " ");
}

size_t sy_layout_describe(const sy_layout* layout, char* text, size_t capacity) {
  text_sink s = {text, text != NULL ? capacity : 0, 0};
  if (layout == NULL) return 0;
  for (int k = 0; k < SY_REGION_COUNT && layout->placement[k] >= 0; ++k) {
    const sy_region* r = &layout->regions[layout->placement[k]];
    if (r->bytes == 0) continue;
    put(&s, r->symmetric ? "sym   " : "local ");
    put_padded(&s, r->name, 15);
    put(&s, " ");
    put_padded(&s, sy_region_dtype_name_(r->dtype), 9);
    put(&s, " [");
    for (int i = 0; i < r->shape_dims; ++i) {
      char buf[24];
      snprintf(buf, sizeof buf, i ? ", %llu" : "%llu", (unsigned long long)r->shape[i]);
      put(&s, buf);
    }
    put(&s, "] ");
    put_mib(&s, r->bytes);
    put(&s, "\n");
  }
  put(&s, "symmetric ");
  put_mib(&s, layout->symmetric_bytes);
  put(&s, " + local ");
  put_mib(&s, layout->local_bytes);
  put(&s, " = ");
  put_mib(&s, layout->bytes_per_rank);
  put(&s, " per rank");
  if (s.capacity > 0) s.text[s.need < s.capacity ? s.need : s.capacity - 1] = '\0';
  return s.need + 1;
}
