"""The layout through the C library (built here with gcc / cc): checks, invariants, the report."""

import pytest

from switchyard_cuda import Config, ConfigError, compute_layout

DEEPSEEK = Config(ranks=4, experts=256, top_k=8, hidden=7168, max_tokens_per_rank=128, dispatch_dtype="fp8-e4m3")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"experts": 7, "ranks": 2, "top_k": 2}, "experts", "EpConfig.experts = 7: must be a multiple of ranks (2)"),
        ({"top_k": 0}, "topK", "EpConfig.topK = 0: must be an integer in [1, 256]"),
        ({"hidden": 100}, "hidden", "must be a multiple of 128 (the fp8 scale block) for fp8"),
        ({"input_dtype": "fp8-e4m3", "dispatch_dtype": "bf16"}, "dispatchDtype", '"bf16": must be fp8-e4m3'),
        ({"dp_size": 3}, "dpSize", "EpConfig.dpSize = 3: must divide ranks (4)"),
        ({"max_tokens_per_rank": 2**21}, "maxTokensPerRank", "split the batch"),
        ({"layout": "dense"}, "layout", "must be one of masked, contiguous"),
        ({"ranks": 2.5}, "ranks", "must be an integer"),
        ({"dispatch_dtype": "fp4"}, "dispatchDtype", "must be one of bf16, fp8-e4m3"),
    ],
)
def test_refuses_a_broken_config_with_cores_field_and_message(layout_lib, change, field, message):
    config = Config(**{**DEEPSEEK.__dict__, **change})
    with pytest.raises(ConfigError) as e:
        compute_layout(config, layout_lib)
    assert e.value.field == field
    assert message in str(e.value)


@pytest.mark.parametrize("layout", ["masked", "contiguous"])
def test_regions_are_aligned_disjoint_and_sized_by_their_shape(layout_lib, layout):
    config = Config(**{**DEEPSEEK.__dict__, "layout": layout, "expert_alignment": 64})
    lay = compute_layout(config, layout_lib)
    size = {"u32": 4, "i32": 4, "f32": 4, "bf16": 2, "fp8-e4m3": 1}
    for heap in (True, False):
        spans = sorted((r.offset, r.offset + r.bytes) for r in lay.regions.values() if r.bytes and r.symmetric == heap)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert end <= start
        assert all(end <= (lay.symmetric_bytes if heap else lay.local_bytes) for _, end in spans)
    for r in lay.regions.values():
        assert r.offset % 256 == 0
        n = 1
        for s in r.shape:
            n *= s
        assert r.bytes == n * size[r.dtype]
    assert lay.bytes_per_rank == lay.symmetric_bytes + lay.local_bytes
    assert lay.slots_per_rank == 8 and lay.route_words == 2 + 4 * 8
    assert len(lay.params) == len(lay.param_names) and lay.param_names[0] == "ranks"
    assert lay.params[lay.param_names.index("recvX.bytes")] == lay.regions["recvX"].bytes


def test_memory_report_lists_used_regions_and_totals(layout_lib):
    text = compute_layout(DEEPSEEK, layout_lib).describe()
    assert "local recvX           fp8-e4m3  [64, 512, 7168] 224.00 MiB" in text
    assert text.splitlines()[-1].endswith("per rank") and "dispatchScales" in text
