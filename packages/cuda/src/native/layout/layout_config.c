/* Config validation: core's validateConfig (packages/core/src/config.ts), rule for rule, in its
 * order and with its messages ("EpConfig.<field> = <value>: <rule>"), so a refusal reads the same
 * in C, Python and TypeScript. */
#include <stdarg.h>
#include <stdio.h>

#include "layout_internal.h"

int sy_layout_refuse_(sy_layout* out, const char* field, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(out->error, sizeof out->error, format, args);
  va_end(args);
  out->error_field = field;
  return SY_ERR_INVALID_ARGUMENT;
}

const char* sy_dtype_name_(int32_t dtype) {
  switch (dtype) {
    case SY_DTYPE_BF16: return "bf16";
    case SY_DTYPE_FP8_E4M3: return "fp8-e4m3";
    default: return NULL;
  }
}

/* Core's positiveInt: an integer in [1, max]. */
static int positive(sy_layout* out, const char* field, int64_t v, int64_t max) {
  if (v >= 1 && v <= max) return SY_OK;
  return sy_layout_refuse_(out, field, "EpConfig.%s = %lld: must be an integer in [1, %lld]", field, (long long)v,
                           (long long)max);
}

#define SY_TRY(expr)             \
  do {                           \
    const int rc_ = (expr);      \
    if (rc_ != SY_OK) return rc_; \
  } while (0)

static int dtypes(const sy_config* c, sy_layout* out) {
  const char* fields[2] = {"inputDtype", "dispatchDtype"};
  const int32_t values[2] = {c->input_dtype, c->dispatch_dtype};
  for (int i = 0; i < 2; ++i) {
    if (sy_dtype_name_(values[i]) == NULL) {
      return sy_layout_refuse_(out, fields[i], "EpConfig.%s = %d: must be one of bf16, fp8-e4m3", fields[i],
                               (int)values[i]);
    }
  }
  if (c->input_dtype == SY_DTYPE_FP8_E4M3 && c->dispatch_dtype != SY_DTYPE_FP8_E4M3) {
    return sy_layout_refuse_(out, "dispatchDtype",
                             "EpConfig.dispatchDtype = \"%s\": must be fp8-e4m3 when inputDtype is fp8-e4m3",
                             sy_dtype_name_(c->dispatch_dtype));
  }
  if (c->dispatch_dtype == SY_DTYPE_FP8_E4M3 && c->hidden % SY_FP8_BLOCK != 0) {
    return sy_layout_refuse_(out, "hidden",
                             "EpConfig.hidden = %lld: must be a multiple of %d (the fp8 scale block) for fp8",
                             (long long)c->hidden, SY_FP8_BLOCK);
  }
  return SY_OK;
}

int sy_layout_validate_(const sy_config* c, sy_layout* out) {
  SY_TRY(positive(out, "ranks", c->ranks, 4096));
  SY_TRY(positive(out, "dpSize", c->dp_size, c->ranks));
  SY_TRY(positive(out, "experts", c->experts, 1 << 20));
  SY_TRY(positive(out, "topK", c->top_k, c->experts));
  SY_TRY(positive(out, "hidden", c->hidden, 1 << 20));
  if (c->max_tokens_per_rank > SY_MAX_SIGNAL_COUNT) {
    return sy_layout_refuse_(out, "maxTokensPerRank",
                             "EpConfig.maxTokensPerRank = %lld: must be at most %d: a signal word carries a count in "
                             "21 bits (count + 1); split the batch",
                             (long long)c->max_tokens_per_rank, SY_MAX_SIGNAL_COUNT);
  }
  SY_TRY(positive(out, "maxTokensPerRank", c->max_tokens_per_rank, SY_MAX_SIGNAL_COUNT));
  SY_TRY(positive(out, "expertAlignment", c->expert_alignment, 1 << 16));
  if (c->ranks % c->dp_size != 0) {
    return sy_layout_refuse_(out, "dpSize", "EpConfig.dpSize = %lld: must divide ranks (%lld)", (long long)c->dp_size,
                             (long long)c->ranks);
  }
  if (c->experts % c->ranks != 0) {
    return sy_layout_refuse_(out, "experts",
                             "EpConfig.experts = %lld: must be a multiple of ranks (%lld) so each rank hosts the same "
                             "number",
                             (long long)c->experts, (long long)c->ranks);
  }
  SY_TRY(dtypes(c, out));
  if (c->layout != SY_LAYOUT_MASKED && c->layout != SY_LAYOUT_CONTIGUOUS) {
    return sy_layout_refuse_(out, "layout", "EpConfig.layout = %d: must be one of masked, contiguous", (int)c->layout);
  }
  /* Core checks scaleFormat with the dtypes and combineWeights after the layout; a C config always
   * carries both fields, their defaults (0) standing for "left out". */
  if (c->scale_format != SY_SCALE_POW2) {
    if (c->scale_format != SY_SCALE_AMAX && c->scale_format != SY_SCALE_UE8M0) {
      return sy_layout_refuse_(out, "scaleFormat",
                               "EpConfig.scaleFormat = %d: must be one of pow2, amax, ue8m0 (or left out for pow2)",
                               (int)c->scale_format);
    }
    if (c->dispatch_dtype != SY_DTYPE_FP8_E4M3) {
      return sy_layout_refuse_(out, "scaleFormat",
                               "EpConfig.scaleFormat = \"%s\": applies only to fp8-e4m3 dispatch, and dispatchDtype is "
                               "%s: leave scaleFormat out, or set dispatchDtype to fp8-e4m3",
                               c->scale_format == SY_SCALE_AMAX ? "amax" : "ue8m0", sy_dtype_name_(c->dispatch_dtype));
    }
  }
  if (c->combine_weights != SY_COMBINE_WEIGHTS_EXPERT) {
    if (c->combine_weights != SY_COMBINE_WEIGHTS_HOME) {
      return sy_layout_refuse_(out, "combineWeights", "EpConfig.combineWeights = %d: must be one of expert, home",
                               (int)c->combine_weights);
    }
    if (c->layout != SY_LAYOUT_MASKED) {
      return sy_layout_refuse_(out, "combineWeights",
                               "EpConfig.combineWeights = \"home\": \"home\" needs the masked layout, and layout is "
                               "contiguous: a row per (token, expert) back suits decode batches only; pass the weights "
                               "to dispatch (leave combineWeights out, or set it to \"expert\")");
    }
  }
  return SY_OK;
}
