/* One checked MoE step through libswitchyard_cuda from C: a world of one rank on one GPU.
 *
 *   cc -std=c11 -O2 moe_step.c -I../../include -L../../build -lswitchyard_cuda -Wl,-rpath,../../build -o moe_step
 *   ./moe_step [masked|contiguous]
 *
 * The layout comes from the library's own C layout function (core's computeLayout in C). Identity
 * experts return each delivered row, so the checks are exact: every (token, slot) arrives once at
 * its expert with its payload and provenance, and y equals the protocol's combine (docs/protocol.md)
 * bit for bit: one rank's partial in slot order in fp32, rounded to bf16. Exits 0 when every check
 * passes, 1 on a mismatch or a failed call (printing the status name and the library's message). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchyard_layout.h"

#define CHECK(call)                                                                               \
  do {                                                                                            \
    int st_ = (call);                                                                             \
    if (st_ != SY_OK) {                                                                           \
      fprintf(stderr, "%s failed: %s: %s\n", #call, sy_status_name(st_), sy_last_error(NULL));    \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)

enum { EXPERTS = 8, TOP_K = 4, HIDDEN = 256, TOKENS = 24 };

static float bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint16_t float_to_bf16(float f) { /* round to nearest even; inputs here are finite */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static uint32_t next_random(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

int main(int argc, char** argv) {
  const int contiguous = argc > 1 && strcmp(argv[1], "contiguous") == 0;
  sy_config config;
  sy_config_init(&config);
  config.ranks = 1;
  config.dp_size = 1;
  config.experts = EXPERTS;
  config.top_k = TOP_K;
  config.hidden = HIDDEN;
  config.max_tokens_per_rank = TOKENS;
  config.expert_alignment = contiguous ? 4 : 1;
  config.input_dtype = SY_DTYPE_BF16;
  config.dispatch_dtype = SY_DTYPE_BF16;
  config.layout = contiguous ? SY_LAYOUT_CONTIGUOUS : SY_LAYOUT_MASKED;
  static sy_layout layout;
  layout.struct_size = sizeof layout;
  if (sy_layout_compute(&config, &layout) != SY_OK) {
    fprintf(stderr, "config refused: %s\n", layout.error);
    return 1;
  }

  uint8_t id[SY_UNIQUE_ID_BYTES];
  sy_runtime* rt = NULL;
  sy_endpoint* ep = NULL;
  CHECK(sy_get_unique_id(id));
  CHECK(sy_runtime_create(id, 0, 1, 0, &rt));
  CHECK(sy_endpoint_create(rt, layout.params, layout.param_count, layout.symmetric_bytes, 5000000000ull, &ep));

  /* Inputs: x [T, H] bf16 in [-2, 2), TOP_K distinct experts per token (slot 2 of every third token
   * unused), weights in [0, 1). */
  static uint16_t x[TOKENS * HIDDEN];
  static int32_t idx[TOKENS * TOP_K];
  static float w[TOKENS * TOP_K];
  uint64_t seed = 20261124;
  for (int i = 0; i < TOKENS * HIDDEN; ++i) x[i] = float_to_bf16((float)(next_random(&seed) % 4096) / 1024.0f - 2.0f);
  for (int t = 0; t < TOKENS; ++t) {
    int used = 0;
    for (int k = 0; k < TOP_K; ++k) {
      int e;
      do {
        e = (int)(next_random(&seed) % EXPERTS);
        used = 0;
        for (int j = 0; j < k; ++j) used |= idx[t * TOP_K + j] == e;
      } while (used);
      idx[t * TOP_K + k] = (k == 2 && t % 3 == 0) ? -1 : e;
      w[t * TOP_K + k] = (float)(next_random(&seed) % 1000) / 1000.0f;
    }
  }
  void *dx, *didx, *dw, *dy, *stream;
  CHECK(sy_device_alloc(sizeof x, &dx));
  CHECK(sy_device_alloc(sizeof idx, &didx));
  CHECK(sy_device_alloc(sizeof w, &dw));
  CHECK(sy_device_alloc(sizeof x, &dy));
  CHECK(sy_memcpy_to_device(dx, x, sizeof x));
  CHECK(sy_memcpy_to_device(didx, idx, sizeof idx));
  CHECK(sy_memcpy_to_device(dw, w, sizeof w));
  CHECK(sy_stream_create(&stream));

  /* Dispatch; the identity experts' output is the received rows themselves (bf16 [rows, H]). */
  CHECK(sy_dispatch_send(ep, dx, NULL, (const int32_t*)didx, (const float*)dw, TOKENS, stream));
  CHECK(sy_dispatch_recv(ep, stream));
  CHECK(sy_endpoint_check(ep, stream, NULL));
  void *rx, *rmeta;
  uint64_t rx_bytes, rmeta_bytes;
  const int32_t* dcounts;
  CHECK(sy_endpoint_region(ep, SY_REGION_RECV_X, &rx, &rx_bytes));
  CHECK(sy_endpoint_region(ep, SY_REGION_RECV_META, &rmeta, &rmeta_bytes));
  CHECK(sy_endpoint_counts(ep, &dcounts));
  const uint64_t rows = layout.rows;
  uint16_t* hx = malloc(rows * HIDDEN * 2);
  int32_t* hmeta = malloc(rows * 16);
  int32_t counts[EXPERTS];
  CHECK(sy_memcpy_to_host(hx, rx, rows * HIDDEN * 2));
  CHECK(sy_memcpy_to_host(hmeta, rmeta, rows * 16));
  CHECK(sy_memcpy_to_host(counts, dcounts, sizeof counts));
  CHECK(sy_combine_send(ep, rx, stream));
  CHECK(sy_combine_recv(ep, (const int32_t*)didx, NULL, TOKENS, dy, stream));
  CHECK(sy_endpoint_check(ep, stream, NULL));
  static uint16_t y[TOKENS * HIDDEN];
  CHECK(sy_memcpy_to_host(y, dy, sizeof y));

  /* Check dispatch: expert e's block starts at e*R*M (masked) or after the padded blocks before it
   * (contiguous); its rows are the (token, slot) pairs naming e, in token order, payload bit-exact. */
  int bad = 0;
  uint64_t first = 0;
  for (int e = 0; e < EXPERTS; ++e) {
    if (!contiguous) first = (uint64_t)e * TOKENS;
    int n = 0;
    for (int t = 0; t < TOKENS; ++t) {
      for (int k = 0; k < TOP_K; ++k) {
        if (idx[t * TOP_K + k] != e) continue;
        const uint64_t row = first + n++;
        const int32_t* m = hmeta + row * 4;
        if (m[0] != 0 || m[1] != t || m[2] != k || m[3] != e) {
          if (bad++ < 5) fprintf(stderr, "expert %d row %llu: meta (%d, %d, %d, %d), expected (0, %d, %d, %d)\n", e,
                                 (unsigned long long)row, m[0], m[1], m[2], m[3], t, k, e);
        } else if (memcmp(hx + row * HIDDEN, x + t * HIDDEN, HIDDEN * 2) != 0) {
          if (bad++ < 5) fprintf(stderr, "expert %d row %llu: payload differs from token %d\n", e, (unsigned long long)row, t);
        }
      }
    }
    if (counts[e] != n && bad++ < 5) fprintf(stderr, "expert %d: count %d, expected %d\n", e, counts[e], n);
    if (contiguous) first += (uint64_t)((n + 3) / 4 * 4);
  }
  /* Check combine: the only rank's partial, slot order, fp32 products and sums, rounded once. */
  for (int t = 0; t < TOKENS; ++t) {
    for (int h = 0; h < HIDDEN; ++h) {
      float acc = 0.0f;
      for (int k = 0; k < TOP_K; ++k) {
        if (idx[t * TOP_K + k] < 0) continue;
        volatile float product = w[t * TOP_K + k] * bf16_to_float(x[t * HIDDEN + h]);
        acc = acc + product;
      }
      if (y[t * HIDDEN + h] != float_to_bf16(acc) && bad++ < 5)
        fprintf(stderr, "y[%d][%d] = %g, expected %g\n", t, h, bf16_to_float(y[t * HIDDEN + h]), acc);
    }
  }
  printf("%s: %d tokens, top-%d of %d experts, hidden %d: %s (%d mismatches)\n", contiguous ? "contiguous" : "masked",
         TOKENS, TOP_K, EXPERTS, HIDDEN, bad ? "FAIL" : "PASS", bad);
  free(hx);
  free(hmeta);
  CHECK(sy_stream_destroy(stream));
  CHECK(sy_device_free(dx));
  CHECK(sy_device_free(didx));
  CHECK(sy_device_free(dw));
  CHECK(sy_device_free(dy));
  CHECK(sy_endpoint_destroy(ep));
  CHECK(sy_runtime_destroy(rt));
  return bad ? 1 : 0;
}
