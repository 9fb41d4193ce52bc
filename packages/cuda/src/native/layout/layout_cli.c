/* sy_layout_cli: the C layout as a filter, for the property test that compares it with core.
 *
 * stdin, one config per line, ten integers:
 *   ranks dpSize experts topK hidden maxTokensPerRank expertAlignment inputDtype dispatchDtype layout
 *   scaleFormat combineWeights
 * (dtypes: 0 bf16, 1 fp8-e4m3; layout: 0 masked, 1 contiguous; scaleFormat: 0 pow2, 1 amax, 2 ue8m0;
 * combineWeights: 0 expert, 1 home). stdout, one JSON object per line:
 *   {"status":0,"rows":..,"rowsPerSource":..,"slotsPerRank":..,"routeWords":..,"symmetricBytes":..,
 *    "localBytes":..,"bytesPerRank":..,"params":[..],"paramNames":[..],"regions":[{..}],"describe":".."}
 * or {"status":1,"field":"experts","error":"EpConfig.experts = ..."}. Exit status 0 unless a line
 * could not be read (then 2, with the line number on stderr). */
#include <stdio.h>
#include <stdlib.h>

#include "switchyard_layout.h"

static void put_json_string(const char* s) {
  putchar('"');
  for (; *s; ++s) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c == '\n') fputs("\\n", stdout);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static const char* dtype_name(int32_t d) {
  static const char* const names[] = {"u32", "i32", "f32", "bf16", "fp8-e4m3"};
  return d >= 0 && d < 5 ? names[d] : "?";
}

static void put_region(const sy_region* r) {
  printf("{\"name\":\"%s\",\"offset\":%llu,\"bytes\":%llu,\"align\":%u,\"dtype\":\"%s\",\"symmetric\":%s,\"shape\":[",
         r->name, (unsigned long long)r->offset, (unsigned long long)r->bytes, r->align, dtype_name(r->dtype),
         r->symmetric ? "true" : "false");
  for (int i = 0; i < r->shape_dims; ++i) printf(i ? ",%llu" : "%llu", (unsigned long long)r->shape[i]);
  fputs("],\"axes\":[", stdout);
  for (int i = 0; i < r->axis_count; ++i) printf(i ? ",\"%s\"" : "\"%s\"", r->axes[i]);
  fputs("]}", stdout);
}

static void put_layout(const sy_layout* l) {
  printf("{\"status\":0,\"rows\":%llu,\"rowsPerSource\":%llu,\"slotsPerRank\":%llu,\"routeWords\":%llu,"
         "\"symmetricBytes\":%llu,\"localBytes\":%llu,\"bytesPerRank\":%llu,\"params\":[",
         (unsigned long long)l->rows, (unsigned long long)l->rows_per_source, (unsigned long long)l->slots_per_rank,
         (unsigned long long)l->route_words, (unsigned long long)l->symmetric_bytes,
         (unsigned long long)l->local_bytes, (unsigned long long)l->bytes_per_rank);
  for (size_t i = 0; i < l->param_count; ++i) printf(i ? ",%llu" : "%llu", (unsigned long long)l->params[i]);
  fputs("],\"paramNames\":[", stdout);
  for (size_t i = 0; i < sy_layout_param_count(); ++i) printf(i ? ",\"%s\"" : "\"%s\"", sy_layout_param_name(i));
  fputs("],\"regions\":[", stdout);
  for (int i = 0; i < SY_REGION_COUNT; ++i) {
    if (i) putchar(',');
    put_region(&l->regions[i]);
  }
  fputs("],\"describe\":", stdout);
  static char text[8192];
  sy_layout_describe(l, text, sizeof text);
  put_json_string(text);
  fputs("}\n", stdout);
}

int main(void) {
  char line[1024];
  long n = 0;
  while (fgets(line, sizeof line, stdin) != NULL) {
    ++n;
    long long v[12];
    if (sscanf(line, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11]) != 12) {
      fprintf(stderr, "sy_layout_cli: line %ld is not twelve integers: %s", n, line);
      return 2;
    }
    sy_config c;
    sy_config_init(&c);
    c.ranks = v[0], c.dp_size = v[1], c.experts = v[2], c.top_k = v[3], c.hidden = v[4];
    c.max_tokens_per_rank = v[5], c.expert_alignment = v[6];
    c.input_dtype = (int32_t)v[7], c.dispatch_dtype = (int32_t)v[8], c.layout = (int32_t)v[9];
    c.scale_format = (int32_t)v[10], c.combine_weights = (int32_t)v[11];
    static sy_layout l;
    l.struct_size = sizeof l;
    if (sy_layout_compute(&c, &l) == SY_OK) {
      put_layout(&l);
    } else {
      printf("{\"status\":%d,\"field\":", SY_ERR_INVALID_ARGUMENT);
      put_json_string(l.error_field != NULL ? l.error_field : "");
      fputs(",\"error\":", stdout);
      put_json_string(l.error);
      fputs("}\n", stdout);
    }
  }
  return 0;
}
