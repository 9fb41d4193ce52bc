/* The layout of protocol version 2 (docs/protocol.md): core's computeLayout and layoutParams
 * (packages/core/src/layout) in C. The regions come from layout_regions.gen.h, generated from
 * core's REGION_TABLE: each is placed, in the table's order, one after another in its heap
 * (symmetric or local) at a multiple of 256 bytes. What stays hand-written here is the value of
 * each shape symbol and the overflow checks (every byte count below SY_LAYOUT_MAX_BYTES). The
 * parameter block is the scalars, then (offset, bytes) of every region in REGION_NAMES order. */
#include <string.h>

#include "layout_internal.h"
#include "layout_regions.gen.h"

/* Placement state: both heaps' cursors, the next placement slot, and the first overflow seen. */
typedef struct placer {
  sy_layout* out;
  uint64_t cursor[2]; /* [local, symmetric] */
  int placed;
  int overflow; /* region index whose bytes passed SY_LAYOUT_MAX_BYTES, or -1 */
} placer;

/* a * b, or SY_LAYOUT_MAX_BYTES + 1 once past the limit (so it stays past it). */
static uint64_t mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > SY_LAYOUT_MAX_BYTES / a) return SY_LAYOUT_MAX_BYTES + 1;
  return a * b;
}

static uint64_t align_up(uint64_t n) { return (n + SY_REGION_ALIGN - 1) / SY_REGION_ALIGN * SY_REGION_ALIGN; }

static uint64_t dtype_bytes(int32_t dtype) {
  const int32_t n = (int32_t)(sizeof sy_region_dtype_bytes_ / sizeof sy_region_dtype_bytes_[0]);
  return dtype >= 0 && dtype < n ? sy_region_dtype_bytes_[dtype] : 4;
}

/* Places one region. `shape` has `dims` entries, `axes` `naxes` (a [0] shape keeps its axes). */
static void place(placer* p, int index, int32_t dtype, int symmetric, int dims, const uint64_t* shape, int naxes,
                  const char* const* axes) {
  sy_region* r = &p->out->regions[index];
  uint64_t bytes = dtype_bytes(dtype);
  for (int i = 0; i < dims; ++i) {
    r->shape[i] = shape[i];
    bytes = mul(bytes, shape[i]);
  }
  for (int i = 0; i < naxes; ++i) r->axes[i] = axes[i];
  r->shape_dims = dims;
  r->axis_count = naxes;
  r->dtype = dtype;
  r->symmetric = symmetric;
  r->align = SY_REGION_ALIGN;
  r->offset = align_up(p->cursor[symmetric]);
  r->bytes = bytes;
  if ((bytes > SY_LAYOUT_MAX_BYTES || r->offset + bytes > SY_LAYOUT_MAX_BYTES) && p->overflow < 0) p->overflow = index;
  p->cursor[symmetric] = bytes > SY_LAYOUT_MAX_BYTES ? bytes : r->offset + bytes;
  p->out->placement[p->placed++] = index;
}

/* The value of shape symbol `s` (core's layoutSymbols) for a validated config; products saturate
 * (mul). Every symbol of the generated enum has a case, so one added in core fails to compile
 * here (-Wswitch) until it has its value. */
static uint64_t symbol_value(sy_layout_symbol s, const sy_config* c) {
  const uint64_t R = (uint64_t)c->ranks, E = (uint64_t)c->experts, L = E / R, M = (uint64_t)c->max_tokens_per_rank,
                 K = (uint64_t)c->top_k, A = (uint64_t)c->expert_alignment, J = K < L ? K : L;
  switch (s) {
    case SY_SYM_R: return R;
    case SY_SYM_L: return L;
    case SY_SYM_E: return E;
    case SY_SYM_M: return M;
    case SY_SYM_H: return (uint64_t)c->hidden;
    case SY_SYM_K: return K;
    case SY_SYM_S: return c->dispatch_dtype == SY_DTYPE_FP8_E4M3 ? (uint64_t)c->hidden / SY_FP8_BLOCK : 0;
    case SY_SYM_J: return J;
    case SY_SYM_W: return 2 + 4 * J;
    case SY_SYM_N: {
      const uint64_t n = mul(mul(R, M), J);
      return n > SY_LAYOUT_MAX_BYTES ? n : n + mul(L, A - 1);
    }
    case SY_SYM_META_WORDS: return SY_LAYOUT_META_WORDS;
    case SY_SYM_NONE:
    case SY_SYM_COUNT: break;
  }
  return 0;
}

/* The form of `rule` that fits `c`: the first whose condition holds, or NULL. */
static const sy_region_form* form_of(const sy_region_rule* rule, const sy_config* c) {
  for (int i = 0; i < rule->form_count; ++i) {
    if (sy_region_when_holds_(&rule->forms[i].when, c)) return &rule->forms[i];
  }
  return NULL;
}

/* Places every region the config uses, in the generated table's order. Returns the index of a
 * region with no form for the config (core's tests rule that out), or -1. */
static int place_all(placer* p, const sy_config* c, const uint64_t* sym) {
  for (int k = 0; k < SY_REGION_COUNT; ++k) {
    const sy_region_rule* rule = &sy_region_rules_[k];
    if (!sy_region_when_holds_(&rule->used, c)) continue;
    const sy_region_form* form = form_of(rule, c);
    if (form == NULL) return rule->index;
    const int32_t dtype = rule->dtype == SY_REGION_DTYPE_DISPATCH ? sy_region_dtype_of_dtype_[c->dispatch_dtype]
                                                                  : rule->dtype;
    uint64_t shape[SY_REGION_MAX_DIMS] = {0};
    int dims = 1; /* an empty region: shape [0], its axes kept */
    if (!sy_region_when_holds_(&rule->empty, c)) {
      dims = form->dims;
      for (int i = 0; i < dims; ++i) {
        uint64_t extent = 1;
        for (int f = 0; f < SY_EXTENT_FACTORS && form->shape[i][f] != SY_SYM_NONE; ++f) {
          extent = mul(extent, sym[form->shape[i][f]]);
        }
        shape[i] = extent;
      }
    }
    place(p, rule->index, dtype, sy_region_when_holds_(&rule->symmetric, c), dims, shape, form->dims, form->axes);
  }
  return -1;
}

/* Unused regions: core's placeholder (offset 0, 0 bytes, u32, shape [0], no axes, local). */
static void fill_unused(sy_layout* out) {
  for (int i = 0; i < SY_REGION_COUNT; ++i) {
    sy_region* r = &out->regions[i];
    r->name = sy_region_name_(i);
    if (r->align != 0) continue;
    r->align = SY_REGION_ALIGN;
    r->dtype = SY_REGION_U32;
    r->shape_dims = 1;
    r->shape[0] = 0;
  }
}

static void fill_params(sy_layout* out, const sy_config* c) {
  const uint64_t L = (uint64_t)(c->experts / c->ranks);
  const uint64_t scalars[] = {
      (uint64_t)c->ranks, L, (uint64_t)c->max_tokens_per_rank, (uint64_t)c->hidden, (uint64_t)c->top_k,
      c->dispatch_dtype == SY_DTYPE_FP8_E4M3 ? (uint64_t)c->hidden / SY_FP8_BLOCK : 0,
      c->dispatch_dtype == SY_DTYPE_FP8_E4M3 ? 1u : 2u, (uint64_t)c->dp_size, (uint64_t)c->expert_alignment,
      out->rows_per_source, out->rows, c->layout == SY_LAYOUT_CONTIGUOUS,
      c->input_dtype == SY_DTYPE_BF16 && c->dispatch_dtype == SY_DTYPE_FP8_E4M3, c->input_dtype == SY_DTYPE_FP8_E4M3,
      out->slots_per_rank, out->route_words, (uint64_t)c->experts, (uint64_t)c->scale_format,
      c->combine_weights == SY_COMBINE_WEIGHTS_HOME};
  size_t n = 0;
  for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; ++i) out->params[n++] = scalars[i];
  for (int i = 0; i < SY_REGION_COUNT; ++i) {
    out->params[n++] = out->regions[i].offset;
    out->params[n++] = out->regions[i].bytes;
  }
  out->param_count = n;
}

static int compute(const sy_config* c, sy_layout* out) {
  const int rc = sy_layout_validate_(c, out);
  if (rc != SY_OK) return rc;
  uint64_t sym[SY_SYM_COUNT];
  for (int s = 0; s < SY_SYM_COUNT; ++s) sym[s] = symbol_value((sy_layout_symbol)s, c);
  const uint64_t R = sym[SY_SYM_R], L = sym[SY_SYM_L], M = sym[SY_SYM_M], J = sym[SY_SYM_J], W = sym[SY_SYM_W],
                 N = sym[SY_SYM_N];
  placer p = {out, {0, 0}, 0, -1};
  for (int i = 0; i < SY_REGION_COUNT; ++i) out->placement[i] = -1;
  const int formless = place_all(&p, c, sym);
  if (formless >= 0) {
    sy_layout_refuse_(out, "(layout)", "layout: region %s has no form for this config in core's REGION_TABLE",
                      sy_region_name_(formless));
    return SY_ERR_INTERNAL;
  }
  const uint64_t sym_bytes = align_up(p.cursor[1]), local = align_up(p.cursor[0]);
  if (p.overflow >= 0 || sym_bytes + local > SY_LAYOUT_MAX_BYTES) {
    const char* what = p.overflow >= 0 ? sy_region_name_(p.overflow) : "symmetric + local";
    return sy_layout_refuse_(out, "(layout)",
                             "layout: %s needs 2^53 bytes or more per rank, past what a double counts exactly; lower "
                             "maxTokensPerRank, hidden or experts",
                             what);
  }
  fill_unused(out);
  out->rows = c->layout == SY_LAYOUT_MASKED ? L * R * M : N;
  out->rows_per_source = M * J;
  out->slots_per_rank = J;
  out->route_words = W;
  out->symmetric_bytes = sym_bytes;
  out->local_bytes = local;
  out->bytes_per_rank = sym_bytes + local;
  fill_params(out, c);
  return SY_OK;
}

/* Whether bytes [from, to) of `p` are all zero (a newer caller's fields this library does not know). */
static int zero_tail(const void* p, size_t from, size_t to) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = from; i < to; ++i) {
    if (b[i] != 0) return 0;
  }
  return 1;
}

void sy_config_init(sy_config* config) {
  if (config == NULL) return;
  memset(config, 0, sizeof *config);
  config->struct_size = sizeof *config;
  config->dp_size = 1;
  config->expert_alignment = 1;
  config->input_dtype = SY_DTYPE_BF16;
  config->dispatch_dtype = SY_DTYPE_BF16;
  config->layout = SY_LAYOUT_MASKED;
}

int sy_layout_compute(const sy_config* config, sy_layout* out) {
  if (out == NULL || out->struct_size < offsetof(sy_layout, error_field)) return SY_ERR_INVALID_ARGUMENT;
  const size_t out_size = out->struct_size;
  sy_layout result;
  memset(&result, 0, sizeof result);
  result.struct_size = out_size < sizeof result ? out_size : sizeof result;
  int rc;
  sy_config c;
  sy_config_init(&c);
  if (config == NULL) {
    rc = sy_layout_refuse_(&result, "(config)", "sy_layout_compute: config is NULL");
  } else if (config->struct_size < sizeof(size_t) ||
             (config->struct_size > sizeof c && !zero_tail(config, sizeof c, config->struct_size))) {
    rc = sy_layout_refuse_(&result, "(config)",
                           "sy_layout_compute: config->struct_size %zu is not one this library knows (%zu); set it "
                           "with sy_config_init",
                           config->struct_size, sizeof c);
  } else {
    memcpy(&c, config, config->struct_size < sizeof c ? config->struct_size : sizeof c);
    c.struct_size = sizeof c;
    rc = compute(&c, &result);
  }
  if (rc != SY_OK) {
    /* A refusal reports only the error; the layout fields stay zero. */
    const char* field = result.error_field;
    char message[SY_LAYOUT_ERROR_BYTES];
    memcpy(message, result.error, sizeof message);
    memset(&result, 0, sizeof result);
    result.struct_size = out_size < sizeof result ? out_size : sizeof result;
    result.error_field = field;
    memcpy(result.error, message, sizeof message);
  }
  memcpy(out, &result, result.struct_size);
  if (out_size > sizeof result) memset((unsigned char*)out + sizeof result, 0, out_size - sizeof result);
  out->struct_size = out_size;
  return rc;
}
