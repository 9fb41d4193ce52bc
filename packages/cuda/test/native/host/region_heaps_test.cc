// The kernels' heap of each region (SyParams::isLocalRegion, kernels/params.cuh), as the host sets it
// from the parameter block (validateParamBlock's localRegions), against the C layout's, which comes
// from core's REGION_TABLE (layout_regions.gen.h): for every layout, combine-weights mode and
// dispatch dtype, every region the layout places is local exactly where the layout does not put it
// in the symmetric heap, and the protocol's rule holds (docs/protocol.md: the outputs recvX /
// recvScales are local in the masked layout, recvMeta in both, every other region symmetric).
#include <cstring>
#include <initializer_list>

#include "../../../src/native/host/params_check.h"
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
        sy::SyParams p{};
        sy::validateParamBlock(l.params, l.param_count, "region_heaps_test", &p.localRegions);
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
          const bool output = r == sy::R_RECV_X || r == sy::R_RECV_SCALES;
          const bool rule = r == sy::R_RECV_META || (layout == SY_LAYOUT_MASKED && output);
          CHECK(p.isLocalRegion(r) == rule, "isLocalRegion follows the protocol's rule");
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 0, "some regions were checked");
  std::printf("region_heaps_test: %d regions checked, %d failure(s)\n", checked, checkFailures());
  return checkFailures() == 0 ? 0 : 1;
}
