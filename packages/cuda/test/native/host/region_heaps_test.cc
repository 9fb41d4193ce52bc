// The kernels' choice of heap for each region (SyParams::isLocalRegion, kernels/params.cuh, hand-written)
// against the C layout's, which comes from core's REGION_TABLE (layout_regions.gen.h): for every
// layout, combine-weights mode and dispatch dtype, every region the layout places must be local
// exactly where the layout does not put it in the symmetric heap. A region added in core with
// another heap fails here until the kernels agree.
#include <cstring>
#include <initializer_list>

#include "../../../src/native/kernels/params.cuh"
#include "check.h"
#include "switchyard_layout.h"

int main() {
  int checked = 0;
  for (int32_t layout : {SY_LAYOUT_MASKED, SY_LAYOUT_CONTIGUOUS}) {
    for (int32_t weights : {SY_COMBINE_WEIGHTS_EXPERT, SY_COMBINE_WEIGHTS_HOME}) {
      for (int32_t dtype : {SY_DTYPE_BF16, SY_DTYPE_FP8_E4M3}) {
        if (layout == SY_LAYOUT_CONTIGUOUS && weights == SY_COMBINE_WEIGHTS_HOME) continue;  // refused
        sy_config c;
        sy_config_init(&c);
        c.ranks = 2;
        c.experts = 8;
        c.top_k = 2;
        c.hidden = 256;
        c.max_tokens_per_rank = 16;
        c.layout = layout;
        c.combine_weights = weights;
        c.dispatch_dtype = dtype;
        sy_layout l;
        std::memset(&l, 0, sizeof l);
        l.struct_size = sizeof l;
        if (sy_layout_compute(&c, &l) != SY_OK) {
          std::printf("layout refused: %s\n", l.error);
          CHECK(false, "the layout computes");
          continue;
        }
        sy::SyParams p;
        std::memcpy(p.v, l.params, sizeof p.v);
        for (int k = 0; k < SY_REGION_COUNT && l.placement[k] >= 0; ++k) {
          const int r = l.placement[k];
          const bool local = l.regions[r].symmetric == 0;
          if (p.isLocalRegion(r) != local) {
            std::printf("  region %s, layout %d, combine weights %d, dtype %d: layout %s, kernels %s\n",
                        l.regions[r].name, layout, weights, dtype, local ? "local" : "symmetric",
                        p.isLocalRegion(r) ? "local" : "symmetric");
          }
          CHECK(p.isLocalRegion(r) == local, "isLocalRegion agrees with the layout's heap");
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 0, "some regions were checked");
  std::printf("region_heaps_test: %d regions checked, %d failure(s)\n", checked, checkFailures());
  return checkFailures() == 0 ? 0 : 1;
}
