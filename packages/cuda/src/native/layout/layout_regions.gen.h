/*
 * layout_regions.gen.h: every region of the layout as data (core's REGION_TABLE), in placement order.
 * Generated from core's contract (packages/core/src/contract), do not edit.
 * Regenerate: npx turbo run build --filter=@switchyard/core && npm run contract -w @switchyard/cuda
 *
 * Included by layout.c alone, which places the regions from it and keeps the overflow checks.
 * An extent is the product of its symbols (SY_SYM_NONE pads); a condition holds when every
 * config field has one of the codes its mask allows (bit `code`; SY_WHEN_ANY allows every code).
 */
#ifndef SWITCHYARD_LAYOUT_REGIONS_GEN_H_
#define SWITCHYARD_LAYOUT_REGIONS_GEN_H_

#include <stdint.h>

#include "switchyard_layout.h"

/* The symbols shapes are written in (core's LAYOUT_SYMBOLS); layout.c's symbol_value gives their values. */
typedef enum sy_layout_symbol {
  SY_SYM_NONE = -1,
  SY_SYM_R = 0,           /* ranks */
  SY_SYM_L = 1,           /* local experts per rank: experts / ranks */
  SY_SYM_E = 2,           /* experts */
  SY_SYM_M = 3,           /* maxTokensPerRank */
  SY_SYM_H = 4,           /* hidden */
  SY_SYM_K = 5,           /* topK */
  SY_SYM_S = 6,           /* fp32 scales per row: hidden / 128 with fp8 dispatch, else 0 */
  SY_SYM_J = 7,           /* min(K, L): the most slots one token has on one rank */
  SY_SYM_W = 8,           /* 2 + 4 * J: i32 words of a route record */
  SY_SYM_N = 9,           /* R * M * J + L * (expertAlignment - 1): delivered rows at most (contiguous) */
  SY_SYM_META_WORDS = 10, /* 4: metadata words per delivered row */
  SY_SYM_COUNT = 11
} sy_layout_symbol;

/* Core's META_WORDS: metadata words per delivered row. */
#define SY_LAYOUT_META_WORDS 4
/* The most symbols in one extent, extents in one shape, forms of one region. */
#define SY_EXTENT_FACTORS 2
#define SY_REGION_MAX_DIMS 3
#define SY_REGION_MAX_FORMS 2
_Static_assert(SY_REGION_MAX_DIMS <= SY_LAYOUT_MAX_DIMS, "a region's shape fits sy_region.shape");

/* A condition on the config: for each field, the codes it may have (bit `code` set). */
typedef struct sy_region_when {
  uint32_t layout;          /* sy_layout_kind codes */
  uint32_t combine_weights; /* sy_combine_weights codes */
  uint32_t dispatch_dtype;  /* sy_dtype codes */
} sy_region_when;
#define SY_WHEN_ANY 0xffffffffu
#define SY_WHEN_BIT(code) (1u << (code))
#define SY_WHEN_ALWAYS {SY_WHEN_ANY, SY_WHEN_ANY, SY_WHEN_ANY}
#define SY_WHEN_NEVER {0u, 0u, 0u}

/* Whether `mask` allows `code`. */
static inline int sy_when_allows_(uint32_t mask, int32_t code) {
  return code >= 0 && code < 32 && ((mask >> code) & 1u) != 0;
}

/* Whether condition `w` holds for config `c`. */
static inline int sy_region_when_holds_(const sy_region_when* w, const sy_config* c) {
  return sy_when_allows_(w->layout, c->layout) &&
         sy_when_allows_(w->combine_weights, c->combine_weights) &&
         sy_when_allows_(w->dispatch_dtype, c->dispatch_dtype);
}

/* One form of a region: where it applies, its extents (products of symbols), one axis name each. */
typedef struct sy_region_form {
  sy_region_when when;
  int32_t dims;
  int8_t shape[SY_REGION_MAX_DIMS][SY_EXTENT_FACTORS];
  const char* axes[SY_REGION_MAX_DIMS];
} sy_region_form;

/* The dtype of a region that holds the config's dispatch dtype. */
#define SY_REGION_DTYPE_DISPATCH (-1)

/* One region (core's RegionDescription). */
typedef struct sy_region_rule {
  int32_t index;            /* sy_region_index */
  int32_t dtype;            /* sy_region_dtype, or SY_REGION_DTYPE_DISPATCH */
  sy_region_when used;      /* placed where this holds, reported unused elsewhere */
  sy_region_when symmetric; /* in the symmetric heap where this holds, else local */
  sy_region_when empty;     /* placed with shape [0], its axes kept, where this holds */
  int32_t form_count;
  sy_region_form forms[SY_REGION_MAX_FORMS]; /* the first whose `when` holds applies */
} sy_region_rule;

/* Element bytes of each sy_region_dtype (core's REGION_DTYPE_BYTES). */
static const uint8_t sy_region_dtype_bytes_[5] = {4, 4, 4, 2, 1};

/* The sy_region_dtype of each sy_dtype (for SY_REGION_DTYPE_DISPATCH). */
static const int32_t sy_region_dtype_of_dtype_[2] = {SY_REGION_BF16, SY_REGION_FP8_E4M3};

/* Every region, in placement order (core's REGION_TABLE). */
static const sy_region_rule sy_region_rules_[SY_REGION_COUNT] = {
  /* countSignal */
  {
    .index = SY_REGION_COUNT_SIGNAL,
    .dtype = SY_REGION_U32,
    .used = SY_WHEN_ALWAYS,
    .symmetric = SY_WHEN_ALWAYS,
    .empty = SY_WHEN_NEVER,
    .form_count = 2,
    .forms = {
      /* [R, L]: signal from source rank: its row count for each local expert */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_MASKED), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 2,
        .shape = {{SY_SYM_R, SY_SYM_NONE}, {SY_SYM_L, SY_SYM_NONE}},
        .axes = {"srcRank", "localExpert"},
      },
      /* [R, E]: signal from source rank: its row count for every expert of the world (counts first) */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_CONTIGUOUS), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 2,
        .shape = {{SY_SYM_R, SY_SYM_NONE}, {SY_SYM_E, SY_SYM_NONE}},
        .axes = {"srcRank", "expert"},
      },
    },
  },
  /* dispatchSignal */
  {
    .index = SY_REGION_DISPATCH_SIGNAL,
    .dtype = SY_REGION_U32,
    .used = SY_WHEN_ALWAYS,
    .symmetric = SY_WHEN_ALWAYS,
    .empty = SY_WHEN_NEVER,
    .form_count = 1,
    .forms = {
      /* [R]: signal from source rank after its rows and route records (count = records) */
      {
        .when = SY_WHEN_ALWAYS,
        .dims = 1,
        .shape = {{SY_SYM_R, SY_SYM_NONE}},
        .axes = {"srcRank"},
      },
    },
  },
  /* dispatchX */
  {
    .index = SY_REGION_DISPATCH_X,
    .dtype = SY_REGION_DTYPE_DISPATCH,
    .used = {.layout = SY_WHEN_BIT(SY_LAYOUT_MASKED), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
    .symmetric = SY_WHEN_ALWAYS,
    .empty = SY_WHEN_NEVER,
    .form_count = 1,
    .forms = {
      /* [R, M, H]: payload of route record j from srcRank (one row per token and rank) */
      {
        .when = SY_WHEN_ALWAYS,
        .dims = 3,
        .shape = {{SY_SYM_R, SY_SYM_NONE}, {SY_SYM_M, SY_SYM_NONE}, {SY_SYM_H, SY_SYM_NONE}},
        .axes = {"srcRank", "record", "hidden"},
      },
    },
  },
  /* dispatchScales */
  {
    .index = SY_REGION_DISPATCH_SCALES,
    .dtype = SY_REGION_F32,
    .used = {.layout = SY_WHEN_BIT(SY_LAYOUT_MASKED), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
    .symmetric = SY_WHEN_ALWAYS,
    .empty = {.layout = SY_WHEN_ANY, .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_BIT(SY_DTYPE_BF16)},
    .form_count = 1,
    .forms = {
      /* [R, M, S]: fp32 scale per 128-element block of each record's row (fp8 only) */
      {
        .when = SY_WHEN_ALWAYS,
        .dims = 3,
        .shape = {{SY_SYM_R, SY_SYM_NONE}, {SY_SYM_M, SY_SYM_NONE}, {SY_SYM_S, SY_SYM_NONE}},
        .axes = {"srcRank", "record", "block"},
      },
    },
  },
  /* dispatchRoutes */
  {
    .index = SY_REGION_DISPATCH_ROUTES,
    .dtype = SY_REGION_I32,
    .used = SY_WHEN_ALWAYS,
    .symmetric = SY_WHEN_ALWAYS,
    .empty = SY_WHEN_NEVER,
    .form_count = 1,
    .forms = {
      /* [R, M, W]: route record j from srcRank: (srcToken, n, n x (localExpert, slot, index, weight bits)) */
      {
        .when = SY_WHEN_ALWAYS,
        .dims = 3,
        .shape = {{SY_SYM_R, SY_SYM_NONE}, {SY_SYM_M, SY_SYM_NONE}, {SY_SYM_W, SY_SYM_NONE}},
        .axes = {"srcRank", "record", "word"},
      },
    },
  },
  /* combineSignal */
  {
    .index = SY_REGION_COMBINE_SIGNAL,
    .dtype = SY_REGION_U32,
    .used = SY_WHEN_ALWAYS,
    .symmetric = SY_WHEN_ALWAYS,
    .empty = SY_WHEN_NEVER,
    .form_count = 2,
    .forms = {
      /* [R]: signal from each expert rank after its rows for this rank (count = tokens whose rows it wrote) */
      {
        .when = {.layout = SY_WHEN_ANY, .combine_weights = SY_WHEN_BIT(SY_COMBINE_WEIGHTS_HOME), .dispatch_dtype = SY_WHEN_ANY},
        .dims = 1,
        .shape = {{SY_SYM_R, SY_SYM_NONE}},
        .axes = {"expertRank"},
      },
      /* [R]: signal from each expert rank after its partials for this rank (count = partials) */
      {
        .when = SY_WHEN_ALWAYS,
        .dims = 1,
        .shape = {{SY_SYM_R, SY_SYM_NONE}},
        .axes = {"expertRank"},
      },
    },
  },
  /* combineX */
  {
    .index = SY_REGION_COMBINE_X,
    .dtype = SY_REGION_BF16,
    .used = SY_WHEN_ALWAYS,
    .symmetric = SY_WHEN_ALWAYS,
    .empty = SY_WHEN_NEVER,
    .form_count = 2,
    .forms = {
      /* [M, K, H]: expert output of slot k of this rank's (DP group's) token t, unweighted, bf16; written by the rank hosting the slot's expert */
      {
        .when = {.layout = SY_WHEN_ANY, .combine_weights = SY_WHEN_BIT(SY_COMBINE_WEIGHTS_HOME), .dispatch_dtype = SY_WHEN_ANY},
        .dims = 3,
        .shape = {{SY_SYM_M, SY_SYM_NONE}, {SY_SYM_K, SY_SYM_NONE}, {SY_SYM_H, SY_SYM_NONE}},
        .axes = {"token", "slot", "hidden"},
      },
      /* [R, M, H]: partial of expert rank r for this rank's (DP group's) token t: its slots' weighted sum, bf16 */
      {
        .when = SY_WHEN_ALWAYS,
        .dims = 3,
        .shape = {{SY_SYM_R, SY_SYM_NONE}, {SY_SYM_M, SY_SYM_NONE}, {SY_SYM_H, SY_SYM_NONE}},
        .axes = {"expertRank", "token", "hidden"},
      },
    },
  },
  /* recvX */
  {
    .index = SY_REGION_RECV_X,
    .dtype = SY_REGION_DTYPE_DISPATCH,
    .used = SY_WHEN_ALWAYS,
    .symmetric = {.layout = SY_WHEN_BIT(SY_LAYOUT_CONTIGUOUS), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
    .empty = SY_WHEN_NEVER,
    .form_count = 2,
    .forms = {
      /* [L, R*M, H]: output: expert e's rows packed at the front of its block, by (srcRank, srcToken) */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_MASKED), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 3,
        .shape = {{SY_SYM_L, SY_SYM_NONE}, {SY_SYM_R, SY_SYM_M}, {SY_SYM_H, SY_SYM_NONE}},
        .axes = {"localExpert", "row", "hidden"},
      },
      /* [N, H]: output: expert blocks in order, rows by (srcRank, srcToken), each block padded to expertAlignment; senders write each token once, at its first entry's row */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_CONTIGUOUS), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 2,
        .shape = {{SY_SYM_N, SY_SYM_NONE}, {SY_SYM_H, SY_SYM_NONE}},
        .axes = {"row", "hidden"},
      },
    },
  },
  /* recvScales */
  {
    .index = SY_REGION_RECV_SCALES,
    .dtype = SY_REGION_F32,
    .used = SY_WHEN_ALWAYS,
    .symmetric = {.layout = SY_WHEN_BIT(SY_LAYOUT_CONTIGUOUS), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
    .empty = {.layout = SY_WHEN_ANY, .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_BIT(SY_DTYPE_BF16)},
    .form_count = 2,
    .forms = {
      /* [L, R*M, S]: output: block scales of each row (fp8 only) */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_MASKED), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 3,
        .shape = {{SY_SYM_L, SY_SYM_NONE}, {SY_SYM_R, SY_SYM_M}, {SY_SYM_S, SY_SYM_NONE}},
        .axes = {"localExpert", "row", "block"},
      },
      /* [N, S]: output: block scales of each row (fp8 only) */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_CONTIGUOUS), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 2,
        .shape = {{SY_SYM_N, SY_SYM_NONE}, {SY_SYM_S, SY_SYM_NONE}},
        .axes = {"row", "block"},
      },
    },
  },
  /* recvMeta */
  {
    .index = SY_REGION_RECV_META,
    .dtype = SY_REGION_I32,
    .used = SY_WHEN_ALWAYS,
    .symmetric = SY_WHEN_NEVER,
    .empty = SY_WHEN_NEVER,
    .form_count = 2,
    .forms = {
      /* [L, R*M, META_WORDS]: output: (srcRank, srcToken, topkSlot, localExpert) of each row */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_MASKED), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 3,
        .shape = {{SY_SYM_L, SY_SYM_NONE}, {SY_SYM_R, SY_SYM_M}, {SY_SYM_META_WORDS, SY_SYM_NONE}},
        .axes = {"localExpert", "row", "word"},
      },
      /* [N, META_WORDS]: output: (srcRank, srcToken, topkSlot, localExpert) of each row; srcRank -1 on padding rows */
      {
        .when = {.layout = SY_WHEN_BIT(SY_LAYOUT_CONTIGUOUS), .combine_weights = SY_WHEN_ANY, .dispatch_dtype = SY_WHEN_ANY},
        .dims = 2,
        .shape = {{SY_SYM_N, SY_SYM_NONE}, {SY_SYM_META_WORDS, SY_SYM_NONE}},
        .axes = {"row", "word"},
      },
    },
  },
};

#endif /* SWITCHYARD_LAYOUT_REGIONS_GEN_H_ */
