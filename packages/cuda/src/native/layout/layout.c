/* The layout of protocol version 2 (docs/protocol.md): core's computeLayout and layoutParams
 * (packages/core/src/layout) in C. Regions are placed one after another in two heaps, each at a
 * multiple of 256 bytes, in the order core lists them; the parameter block is the scalars, then
 * (offset, bytes) of every region in REGION_NAMES order. */
#include <string.h>

#include "layout_internal.h"

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
  switch (dtype) {
    case SY_REGION_BF16: return 2;
    case SY_REGION_FP8_E4M3: return 1;
    default: return 4;
  }
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

/* A region whose shape is [0] when `used` is false (scales without fp8). */
static void place_opt(placer* p, int index, int32_t dtype, int symmetric, int used, int dims, const uint64_t* shape,
                      int naxes, const char* const* axes) {
  static const uint64_t zero[1] = {0};
  if (used) place(p, index, dtype, symmetric, dims, shape, naxes, axes);
  else place(p, index, dtype, symmetric, 1, zero, naxes, axes);
}

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void place_all(placer* p, const sy_config* c, uint64_t S, uint64_t W, uint64_t N) {
  const uint64_t R = (uint64_t)c->ranks, E = (uint64_t)c->experts, L = E / R, M = (uint64_t)c->max_tokens_per_rank,
                 H = (uint64_t)c->hidden;
  const int masked = c->layout == SY_LAYOUT_MASKED;
  const int32_t d = c->dispatch_dtype == SY_DTYPE_FP8_E4M3 ? SY_REGION_FP8_E4M3 : SY_REGION_BF16;
  {
    const uint64_t shape[2] = {R, masked ? L : E};
    const char* axes[2] = {"srcRank", masked ? "localExpert" : "expert"};
    place(p, SY_REGION_COUNT_SIGNAL, SY_REGION_U32, 1, 2, shape, 2, axes);
  }
  {
    const uint64_t shape[1] = {R};
    const char* axes[1] = {"srcRank"};
    place(p, SY_REGION_DISPATCH_SIGNAL, SY_REGION_U32, 1, 1, shape, 1, axes);
  }
  if (masked) {
    const uint64_t x[3] = {R, M, H}, s[3] = {R, M, S};
    const char* xa[3] = {"srcRank", "record", "hidden"};
    const char* sa[3] = {"srcRank", "record", "block"};
    place(p, SY_REGION_DISPATCH_X, d, 1, 3, x, 3, xa);
    place_opt(p, SY_REGION_DISPATCH_SCALES, SY_REGION_F32, 1, S != 0, 3, s, 3, sa);
  }
  {
    const uint64_t shape[3] = {R, M, W};
    const char* axes[3] = {"srcRank", "record", "word"};
    place(p, SY_REGION_DISPATCH_ROUTES, SY_REGION_I32, 1, 3, shape, 3, axes);
  }
  {
    /* combineX: a partial per (expert rank, token), or with weights at home a row per (token, slot). */
    const int home = c->combine_weights == SY_COMBINE_WEIGHTS_HOME;
    const uint64_t sig[1] = {R}, x[3] = {home ? M : R, home ? (uint64_t)c->top_k : M, H};
    const char* siga[1] = {"expertRank"};
    const char* xa[3] = {home ? "token" : "expertRank", home ? "slot" : "token", "hidden"};
    place(p, SY_REGION_COMBINE_SIGNAL, SY_REGION_U32, 1, 1, sig, N_OF(siga), siga);
    place(p, SY_REGION_COMBINE_X, SY_REGION_BF16, 1, 3, x, N_OF(xa), xa);
  }
  /* Outputs: masked [L, R*M, ...] local; contiguous [N, ...], x and scales symmetric (senders
   * write rows at their final positions). */
  const int lead = masked ? 2 : 1;
  const uint64_t o0 = masked ? L : N, o1 = masked ? mul(R, M) : 0;
  const char* a0 = masked ? "localExpert" : "row";
  const uint64_t x[3] = {o0, masked ? o1 : H, H}, s[3] = {o0, masked ? o1 : S, S}, m[3] = {o0, masked ? o1 : 4, 4};
  const char* xa[3] = {a0, masked ? "row" : "hidden", "hidden"};
  const char* sa[3] = {a0, masked ? "row" : "block", "block"};
  const char* ma[3] = {a0, masked ? "row" : "word", "word"};
  place(p, SY_REGION_RECV_X, d, !masked, lead + 1, x, lead + 1, xa);
  place_opt(p, SY_REGION_RECV_SCALES, SY_REGION_F32, !masked, S != 0, lead + 1, s, lead + 1, sa);
  place(p, SY_REGION_RECV_META, SY_REGION_I32, 0, lead + 1, m, lead + 1, ma);
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
  const uint64_t R = (uint64_t)c->ranks, L = (uint64_t)(c->experts / c->ranks), M = (uint64_t)c->max_tokens_per_rank,
                 K = (uint64_t)c->top_k, A = (uint64_t)c->expert_alignment;
  const uint64_t S = c->dispatch_dtype == SY_DTYPE_FP8_E4M3 ? (uint64_t)c->hidden / SY_FP8_BLOCK : 0;
  const uint64_t J = K < L ? K : L, W = 2 + 4 * J;
  uint64_t N = mul(mul(R, M), J);
  N = N > SY_LAYOUT_MAX_BYTES ? N : N + mul(L, A - 1);
  placer p = {out, {0, 0}, 0, -1};
  for (int i = 0; i < SY_REGION_COUNT; ++i) out->placement[i] = -1;
  place_all(&p, c, S, W, N);
  const uint64_t sym = align_up(p.cursor[1]), local = align_up(p.cursor[0]);
  if (p.overflow >= 0 || sym + local > SY_LAYOUT_MAX_BYTES) {
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
  out->symmetric_bytes = sym;
  out->local_bytes = local;
  out->bytes_per_rank = sym + local;
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
