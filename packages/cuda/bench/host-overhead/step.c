/* The host side of one MoE step driven from C: the baseline the Python package is compared with.
 *
 *   cc -std=c11 -O2 step.c -I../../include -I../native/include -L../../build -lswitchyard_cuda_bench -lswitchyard_cuda \
 *      -Wl,-rpath,../../build -o step
 *   ./step masked:1 masked:128 contiguous:128 [--steps N] [--experts E]
 *
 * A world of one rank on GPU 0; per point (layout:tokens) one endpoint of the bench's DeepSeek-like
 * config (256 experts unless --experts, top-8, hidden 7168, bf16 in, fp8 dispatch). step.py does exactly the same
 * calls through the Python package, with the same inputs (sy_fill_random, the same routes), so the
 * difference of the two is what Python adds. Per point, after WARMUP steps:
 *   eager  N steps, each: the four phases then sy_endpoint_check (synchronises and reads the error
 *          word); wall time of each call and of the whole step
 *   graph  the four phases captured once; N replays, each: sy_graph_launch then sy_endpoint_check
 * Prints one JSON object (median, p10, p90 in microseconds). Exits 1 on a failed call. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "switchyard_bench.h" /* sy_fill_random: the bench library's */
#include "switchyard_layout.h"

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    int st_ = (call);                                                                               \
    if (st_ != SY_OK) {                                                                             \
      fprintf(stderr, "%s failed: %s: %s\n", #call, sy_status_name(st_), sy_last_error(NULL));      \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

enum { TOP_K = 8, HIDDEN = 7168, WARMUP = 50, PHASES = 4 };
static int EXPERTS = 256; /* --experts: a multiple of TOP_K (the routes below need EXPERTS / TOP_K >= 1) */
static const char* const PHASE_NAMES[PHASES] = {"dispatch_send", "dispatch_recv", "combine_send", "combine_recv"};

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* "name": {"median": m, "p10": a, "p90": b} of n samples (sorted in place). */
static void print_summary(const char* name, double* v, int n, int last) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  printf("      \"%s\": {\"median\": %.3f, \"p10\": %.3f, \"p90\": %.3f}%s\n", name, v[n / 2], v[n / 10],
         v[(n * 9) / 10], last ? "" : ",");
}

/* The routes both drivers use: token t's slot k goes to expert (37 t + (E / 8) k) mod E (distinct in k). */
static void fill_routes(int32_t* idx, float* w, int tokens) {
  for (int t = 0; t < tokens; ++t) {
    for (int k = 0; k < TOP_K; ++k) {
      idx[t * TOP_K + k] = (37 * t + (EXPERTS / TOP_K) * k) % EXPERTS;
      w[t * TOP_K + k] = 1.0f / TOP_K;
    }
  }
}

static void run_point(sy_runtime* rt, void* stream, int contiguous, int tokens, int steps, int last) {
  sy_config config;
  sy_config_init(&config);
  config.ranks = 1;
  config.dp_size = 1;
  config.experts = EXPERTS;
  config.top_k = TOP_K;
  config.hidden = HIDDEN;
  config.max_tokens_per_rank = tokens;
  config.expert_alignment = contiguous ? 128 : 1;
  config.input_dtype = SY_DTYPE_BF16;
  config.dispatch_dtype = SY_DTYPE_FP8_E4M3;
  config.layout = contiguous ? SY_LAYOUT_CONTIGUOUS : SY_LAYOUT_MASKED;
  static sy_layout layout;
  memset(&layout, 0, sizeof layout);
  layout.struct_size = sizeof layout;
  if (sy_layout_compute(&config, &layout) != SY_OK) {
    fprintf(stderr, "config refused: %s\n", layout.error);
    exit(1);
  }
  sy_endpoint* ep = NULL;
  CHECK(sy_endpoint_create(rt, layout.params, layout.param_count, layout.symmetric_bytes, 10000000000ull, &ep));

  const size_t routes = (size_t)tokens * TOP_K;
  int32_t* idx = malloc(routes * sizeof *idx);
  float* w = malloc(routes * sizeof *w);
  fill_routes(idx, w, tokens);
  void *dx, *didx, *dw, *dy, *dout;
  CHECK(sy_device_alloc((size_t)tokens * HIDDEN * 2, &dx));
  CHECK(sy_device_alloc(routes * sizeof *idx, &didx));
  CHECK(sy_device_alloc(routes * sizeof *w, &dw));
  CHECK(sy_device_alloc((size_t)tokens * HIDDEN * 2, &dy));
  CHECK(sy_device_alloc((size_t)layout.rows * HIDDEN * 2, &dout));
  CHECK(sy_memcpy_to_device(didx, idx, routes * sizeof *idx));
  CHECK(sy_memcpy_to_device(dw, w, routes * sizeof *w));
  CHECK(sy_fill_random(dx, (uint64_t)tokens * HIDDEN, 3, 1, stream));
  CHECK(sy_fill_random(dout, (uint64_t)layout.rows * HIDDEN, 3, 2, stream));
  CHECK(sy_stream_synchronize(stream));

  double* samples[PHASES + 2];
  for (int i = 0; i < PHASES + 2; ++i) samples[i] = malloc((size_t)steps * sizeof(double));
  for (int s = -WARMUP; s < steps; ++s) {
    double t[PHASES + 2];
    t[0] = now_us();
    CHECK(sy_dispatch_send(ep, dx, NULL, (const int32_t*)didx, (const float*)dw, tokens, stream));
    t[1] = now_us();
    CHECK(sy_dispatch_recv(ep, stream));
    t[2] = now_us();
    CHECK(sy_combine_send(ep, dout, stream));
    t[3] = now_us();
    CHECK(sy_combine_recv(ep, (const int32_t*)didx, NULL, tokens, dy, stream));
    t[4] = now_us();
    CHECK(sy_endpoint_check(ep, stream, NULL));
    t[5] = now_us();
    if (s < 0) continue;
    for (int i = 0; i < PHASES; ++i) samples[i][s] = t[i + 1] - t[i];
    samples[PHASES][s] = t[5] - t[0];
  }

  void* graph = NULL;
  CHECK(sy_graph_begin_capture(stream));
  CHECK(sy_dispatch_send(ep, dx, NULL, (const int32_t*)didx, (const float*)dw, tokens, stream));
  CHECK(sy_dispatch_recv(ep, stream));
  CHECK(sy_combine_send(ep, dout, stream));
  CHECK(sy_combine_recv(ep, (const int32_t*)didx, NULL, tokens, dy, stream));
  CHECK(sy_graph_end_capture(stream, &graph));
  for (int s = -WARMUP; s < steps; ++s) {
    const double t0 = now_us();
    CHECK(sy_graph_launch(graph, stream));
    CHECK(sy_endpoint_check(ep, stream, NULL));
    if (s >= 0) samples[PHASES + 1][s] = now_us() - t0;
  }

  printf("    {\"layout\": \"%s\", \"tokens\": %d, \"steps\": %d,\n", contiguous ? "contiguous" : "masked", tokens, steps);
  printf("     \"eager\": {\n");
  for (int i = 0; i < PHASES; ++i) print_summary(PHASE_NAMES[i], samples[i], steps, 0);
  print_summary("step", samples[PHASES], steps, 1);
  printf("     },\n     \"graph\": {\n");
  print_summary("step", samples[PHASES + 1], steps, 1);
  printf("     }}%s\n", last ? "" : ",");

  for (int i = 0; i < PHASES + 2; ++i) free(samples[i]);
  CHECK(sy_graph_destroy(graph));
  CHECK(sy_device_free(dx));
  CHECK(sy_device_free(didx));
  CHECK(sy_device_free(dw));
  CHECK(sy_device_free(dy));
  CHECK(sy_device_free(dout));
  free(idx);
  free(w);
  CHECK(sy_endpoint_destroy(ep));
}

int main(int argc, char** argv) {
  int steps = 1000, points = 0;
  const char* point[16];
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--experts") == 0 && i + 1 < argc) {
      EXPERTS = atoi(argv[++i]);
    } else if (points < 16 && (strncmp(argv[i], "masked:", 7) == 0 || strncmp(argv[i], "contiguous:", 11) == 0)) {
      point[points++] = argv[i];
    } else {
      fprintf(stderr, "usage: step (masked:<tokens> | contiguous:<tokens>)... [--steps N] [--experts E]; got %s\n", argv[i]);
      return 2;
    }
  }
  if (points == 0 || steps < 10 || EXPERTS < TOP_K || EXPERTS % TOP_K != 0) {
    fprintf(stderr, "usage: step (masked:<tokens> | contiguous:<tokens>)... [--steps N >= 10] [--experts E, a multiple of %d]\n",
            TOP_K);
    return 2;
  }
  uint8_t id[SY_UNIQUE_ID_BYTES];
  sy_runtime* rt = NULL;
  void* stream = NULL;
  CHECK(sy_get_unique_id(id));
  CHECK(sy_runtime_create(id, 0, 1, 0, &rt));
  CHECK(sy_stream_create(&stream));
  printf("{\"driver\": \"c\", \"version\": \"%s\", \"experts\": %d, \"points\": [\n", sy_version(), EXPERTS);
  for (int i = 0; i < points; ++i) {
    const char* colon = strchr(point[i], ':');
    const int tokens = atoi(colon + 1);
    if (tokens < 1) {
      fprintf(stderr, "step: %s: tokens must be >= 1\n", point[i]);
      return 2;
    }
    run_point(rt, stream, point[i][0] == 'c', tokens, steps, i + 1 == points);
  }
  printf("]}\n");
  CHECK(sy_stream_destroy(stream));
  CHECK(sy_runtime_destroy(rt));
  return 0;
}
