"""switchyard_cuda.deep_ep without a GPU: the mapping of DeepEP's options, the named errors for what
is not offered, the handle built from counts and recvMeta (on lists, and on torch CPU tensors where
torch is installed), the Config fields it relies on, and the shim that makes `import deep_ep`
resolve here."""

from __future__ import annotations

import inspect
import os
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from switchyard_cuda import Config, ConfigError, Endpoint, InvalidArgumentError, PhaseError, UnsupportedError, _abi
from switchyard_cuda import layout as layout_module
from switchyard_cuda.deep_ep import Buffer, EventOverlap
from switchyard_cuda.deep_ep import Config as DeepEpConfig
from switchyard_cuda.deep_ep.handle import (
    LowLatencyHandle,
    layout_range_reference,
    recv_count_reference,
    src_info_reference,
    ue8m0_words_reference,
)
from switchyard_cuda.deep_ep.options import check_buffer_options, dispatch_formats

PY = Path(__file__).resolve().parents[1]
MASK = (1 << 32) - 1

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (the list form of the rule is tested)")


# -- options ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("use_fp8", "round_scale", "use_ue8m0", "expected"),
    [
        (False, False, False, ("bf16", "pow2")),
        (False, True, True, ("bf16", "pow2")),  # no scales to shape without fp8
        (True, False, False, ("fp8-e4m3", "amax")),
        (True, True, False, ("fp8-e4m3", "pow2")),
        (True, True, True, ("fp8-e4m3", "ue8m0")),
    ],
)
def test_cast_options_map_to_dispatch_dtype_and_scale_format(use_fp8, round_scale, use_ue8m0, expected):
    assert dispatch_formats(use_fp8, round_scale, use_ue8m0) == expected


def test_ue8m0_without_round_scale_is_refused():
    with pytest.raises(InvalidArgumentError) as e:
        dispatch_formats(True, False, True)
    assert "use_ue8m0=True needs round_scale=True" in str(e.value) and "deep_ep.Buffer.low_latency_dispatch" in str(e.value)


BUFFER_DEFAULTS = dict(low_latency_mode=True, allow_nvlink_for_low_latency_mode=True, allow_mnnvl=False,
                       enable_shrink=False, comm=None)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"low_latency_mode": False}, "low_latency_mode=False"),
        ({"allow_nvlink_for_low_latency_mode": False}, "allow_nvlink_for_low_latency_mode=False"),
        ({"allow_mnnvl": True}, "allow_mnnvl=True"),
        ({"enable_shrink": True}, "enable_shrink=True"),
        ({"comm": object()}, "comm"),
    ],
)
def test_buffer_options_not_offered_are_named(change, named):
    check_buffer_options(**BUFFER_DEFAULTS)
    with pytest.raises(UnsupportedError) as e:
        check_buffer_options(**{**BUFFER_DEFAULTS, **change})
    assert named in str(e.value) and "deep_ep.Buffer" in str(e.value)
    with pytest.raises(UnsupportedError):  # before any process group or library is touched
        Buffer(None, **{**BUFFER_DEFAULTS, **change})


def test_buffer_accepts_deepeps_constructor_arguments():
    names = list(inspect.signature(Buffer.__init__).parameters)[1:]
    assert names == ["group", "num_nvl_bytes", "num_rdma_bytes", "low_latency_mode", "num_qps_per_rank",
                     "allow_nvlink_for_low_latency_mode", "allow_mnnvl", "use_fabric", "explicitly_destroy",
                     "enable_shrink", "comm"]


def test_low_latency_calls_take_deepeps_arguments():
    dispatch = list(inspect.signature(Buffer.low_latency_dispatch).parameters)[1:]
    assert dispatch == ["x", "topk_idx", "num_max_dispatch_tokens_per_rank", "num_experts",
                        "cumulative_local_expert_recv_stats", "dispatch_wait_recv_cost_stats", "use_fp8",
                        "round_scale", "use_ue8m0", "async_finish", "return_recv_hook"]
    combine = list(inspect.signature(Buffer.low_latency_combine).parameters)[1:]
    assert combine == ["x", "topk_idx", "topk_weights", "handle", "use_logfmt", "zero_copy", "async_finish",
                       "return_recv_hook", "out", "combine_wait_recv_cost_stats"]


def _bare_buffer() -> Buffer:
    b = Buffer.__new__(Buffer)  # no process group: only what the refusals read
    b._states, b._latest, b._combine_buffers, b.group_size = {}, {}, {}, 2
    return b


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda b: b.low_latency_combine(None, None, None, None, use_logfmt=True), "use_logfmt=True"),
        (lambda b: b.low_latency_combine(None, None, None, None, combine_wait_recv_cost_stats=1),
         "combine_wait_recv_cost_stats"),
        (lambda b: b.low_latency_dispatch(None, None, 8, 16, dispatch_wait_recv_cost_stats=1),
         "dispatch_wait_recv_cost_stats"),
        (lambda b: b.dispatch(), "normal (high-throughput) mode"),
        (lambda b: b.combine(), "normal (high-throughput) mode"),
        (lambda b: b.get_dispatch_layout(None, 16), "normal (high-throughput) mode"),
        (lambda b: b.internode_dispatch(), "normal (high-throughput) mode"),
        (lambda b: Buffer.get_dispatch_config(2), "normal (high-throughput) mode"),
        (lambda b: Buffer.get_combine_config(2), "normal (high-throughput) mode"),
        (lambda b: b.low_latency_query_mask_buffer(None), "shrink mode"),
        (lambda b: b.low_latency_update_mask_buffer(1, True), "shrink mode"),
        (lambda b: DeepEpConfig(24).get_nvl_buffer_size_hint(7168 * 2, 2), "normal (high-throughput) mode"),
    ],
)
def test_what_is_not_offered_raises_unsupported_naming_it(call, named):
    with pytest.raises(UnsupportedError) as e:
        call(_bare_buffer())
    assert named in str(e.value) and "from deep_ep." in str(e.value)


def test_set_num_sms_wants_an_even_count():
    Buffer.set_num_sms(24)
    assert Buffer.num_sms == 24
    with pytest.raises(InvalidArgumentError):
        Buffer.set_num_sms(23)
    Buffer.set_num_sms(20)


def test_an_event_overlap_without_an_event_says_how_to_get_one():
    with pytest.raises(PhaseError) as e:
        EventOverlap().current_stream_wait()
    assert "async_finish=True" in str(e.value)
    with EventOverlap():  # leaving the block without an event waits for nothing
        pass


# -- the handle ------------------------------------------------------------------------------------
def masked_receive(topk: list, rank: int, local_experts: int, max_tokens: int):
    """What rank `rank` receives in the masked layout from every source's topk [R][T][K] (the
    protocol's rule, written plainly): counts [L][R] and recvMeta [L][R*M][4] (rows past a count
    are (-9, -9, -9, -9))."""
    R = len(topk)
    counts = [[0] * R for _ in range(local_experts)]
    meta = [[[-9] * 4 for _ in range(R * max_tokens)] for _ in range(local_experts)]
    for e in range(local_experts):
        row = e * R * max_tokens
        for s in range(R):
            for t, slots in enumerate(topk[s]):
                for k, expert in enumerate(slots):
                    if expert == rank * local_experts + e:
                        meta[e][row - e * R * max_tokens] = [s, t, k, e]
                        counts[e][s] += 1
                        row += 1
    return counts, meta


def random_routing(seed: int, R: int, L: int, M: int, K: int) -> list:
    rng = random.Random(seed)
    topk = []
    for _ in range(R):
        T = rng.randint(0, M)
        rows = []
        for _ in range(T):
            slots = rng.sample(range(R * L), K)
            rows.append([-1 if rng.random() < 0.1 else x for x in slots])
        topk.append(rows)
    return topk


def test_layout_range_packs_begin_high_and_count_low():
    assert layout_range_reference([[3, 0, 5], [0, 0, 0]]) == [[3, (3 << 32) | 0, (3 << 32) | 5], [0, 0, 0]]
    assert recv_count_reference([[3, 0, 5], [0, 0, 0]]) == [8, 0]


@pytest.mark.parametrize("seed", range(20))
def test_layout_range_and_src_info_name_each_sources_rows(seed):
    R, L, M, K = 3, 4, 6, 3
    topk = random_routing(seed, R, L, M, K)
    for rank in range(R):
        counts, meta = masked_receive(topk, rank, L, M)
        ranges, src = layout_range_reference(counts), src_info_reference(meta)
        for e in range(L):
            expert = rank * L + e
            assert recv_count_reference(counts)[e] == sum(row.count(expert) for s in topk for row in s), {"seed": seed}
            for s in range(R):
                begin, count = ranges[e][s] >> 32, ranges[e][s] & MASK
                want = [t for t, row in enumerate(topk[s]) if expert in row]
                assert src[e][begin:begin + count] == want, {"seed": seed, "rank": rank, "expert": e, "source": s}
                assert all(m[0] == s for m in meta[e][begin:begin + count]), {"seed": seed}


def test_ue8m0_words_pack_exponent_bytes_little_endian():
    # 2^-3, 2^0, 2^4, 2^-126, then 2^1: bytes 124, 127, 131, 1 | 128, 0, 0, 0
    words = ue8m0_words_reference([0.125, 1.0, 16.0, 2.0**-126, 2.0])
    assert words == [124 | 127 << 8 | 131 << 16 | 1 << 24, 128]
    assert ue8m0_words_reference([2.0**127] * 4) == [(254 * 0x01010101) - (1 << 32)]  # int32, as torch holds it
    with pytest.raises(ValueError):
        ue8m0_words_reference([0.3])


@needs_torch
@pytest.mark.parametrize("seed", range(5))
def test_fill_handle_on_torch_tensors_matches_the_rule(seed):
    from switchyard_cuda.deep_ep.handle import fill_handle

    R, L, M, K = 4, 3, 5, 4
    topk = random_routing(seed, R, L, M, K)
    counts, meta = masked_receive(topk, 1, L, M)
    recv_count = torch.full((L,), -1, dtype=torch.int32)
    layout_range = torch.full((L, R), -1, dtype=torch.int64)
    src_info = torch.full((L, R * M), -1, dtype=torch.int32)
    fill_handle(torch.tensor(counts, dtype=torch.int32), torch.tensor(meta, dtype=torch.int32), recv_count,
                layout_range, src_info)
    assert recv_count.tolist() == recv_count_reference(counts), {"seed": seed}
    assert layout_range.tolist() == layout_range_reference(counts), {"seed": seed}
    assert src_info.tolist() == src_info_reference(meta), {"seed": seed}


@needs_torch
def test_fill_ue8m0_on_torch_tensors_matches_the_rule():
    from switchyard_cuda.deep_ep.handle import fill_ue8m0

    rng = random.Random(7)
    L, RM, S = 2, 3, 6  # S not a multiple of 4: the last word has two zero bytes
    scales = [[[2.0 ** rng.randint(-126, 127) for _ in range(S)] for _ in range(RM)] for _ in range(L)]
    words = -(-S // 4)
    packed = torch.zeros((L, RM, 4 * words), dtype=torch.uint8)
    fill_ue8m0(torch.tensor(scales, dtype=torch.float32), torch.empty((L, RM, S), dtype=torch.int32), packed)
    assert packed.view(torch.int32).tolist() == [[ue8m0_words_reference(r) for r in block] for block in scales]


def test_the_handle_unpacks_as_deepeps_and_knows_its_dispatch():
    state = object()
    handle = LowLatencyHandle("src", "range", 128, 7168, 288, state=state, step=3)
    src_info, layout_range, m, hidden, experts = handle
    assert (src_info, layout_range, m, hidden, experts) == ("src", "range", 128, 7168, 288)
    assert handle[0] == "src" and len(handle) == 5 and (handle.state, handle.step) == (state, 3)


# -- the Switchyard fields it relies on --------------------------------------------------------------
BASE = dict(ranks=2, experts=16, top_k=4, hidden=256, max_tokens_per_rank=8)


@pytest.mark.parametrize(("field", "core"), [("scale_format", "scaleFormat"), ("combine_weights", "combineWeights")])
def test_config_refuses_an_unknown_scale_format_or_weights_mode(field, core):
    with pytest.raises(ConfigError) as e:
        Config(**BASE, dispatch_dtype="fp8-e4m3", **{field: "fancy"}).to_c()
    assert e.value.field == core and "must be one of" in str(e.value)


@pytest.mark.parametrize(("field", "value", "code"), [("scale_format", "amax", 1), ("scale_format", "ue8m0", 2),
                                                      ("combine_weights", "home", 1)])
def test_config_passes_the_new_fields_to_c(field, value, code):
    config = Config(**BASE, dispatch_dtype="fp8-e4m3", **{field: value})
    assert getattr(config.to_c(), field) == code
    assert Config(**BASE).to_c().ranks == 2  # the defaults go through as before


def test_size_hint_is_the_layouts_symmetric_bytes(layout_lib, monkeypatch):
    monkeypatch.setattr(layout_module, "_LIB", layout_lib)
    config = Config(ranks=2, experts=288, top_k=8, hidden=7168, max_tokens_per_rank=128, combine_weights="home")
    hint = Buffer.get_low_latency_rdma_size_hint(128, 7168, 2, 288, num_topk=8)
    assert hint == layout_module.compute_layout(config).symmetric_bytes > 0


def _endpoint(combine_weights: str) -> Endpoint:
    ep = Endpoint.__new__(Endpoint)  # no GPU: only what the weights check reads
    ep.runtime = SimpleNamespace(rank=0)
    ep.config = Config(**BASE, combine_weights=combine_weights)
    return ep


def test_weights_go_to_dispatch_or_combine_by_the_configs_mode():
    expert, home = _endpoint("expert"), _endpoint("home")
    assert expert._weights(None, "combine_recv", 4, at_home=True) is None
    assert home._weights(None, "dispatch_send", 4, at_home=False) is None
    with pytest.raises(InvalidArgumentError, match='required with combine_weights "expert"'):
        expert._weights(None, "dispatch_send", 4, at_home=False)
    with pytest.raises(InvalidArgumentError, match='required with combine_weights "home"'):
        home._weights(None, "combine_recv", 4, at_home=True)
    with pytest.raises(InvalidArgumentError, match="the weights go to combine_recv"):
        home._weights(object(), "dispatch_send", 4, at_home=False)
    with pytest.raises(InvalidArgumentError, match="pass out= and stream= by keyword"):
        expert._weights(object(), "combine_recv", 4, at_home=True)


# -- the shim ------------------------------------------------------------------------------------------
def test_the_shim_makes_import_deep_ep_resolve_here():
    code = (
        "import deep_ep, switchyard_cuda.deep_ep as m\n"
        "from deep_ep import Buffer, Config, EventOverlap\n"
        "from deep_ep.utils import EventOverlap as E\n"
        "assert deep_ep is m and Buffer is m.Buffer and E is m.EventOverlap, deep_ep\n"
        "print(deep_ep.__name__)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PY / "deep_ep_shim"), str(PY)])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "switchyard_cuda.deep_ep"


@needs_torch
def test_topk_idx_t_is_int64():
    import switchyard_cuda.deep_ep as deep_ep

    assert deep_ep.topk_idx_t is torch.int64


# -- the step order DeepEP's API allows, on an endpoint that records its calls (torch CPU tensors) ----
class RecordingEndpoint:
    """The four phases of an Endpoint, recorded; outputs are zeros of the layout's shapes."""

    def __init__(self, config: Config):
        from switchyard_cuda import DispatchOutput

        self.config, self.calls = config, []
        L, R, M, H = config.local_experts, config.ranks, config.max_tokens_per_rank, config.hidden
        fp8 = config.dispatch_dtype == "fp8-e4m3"
        fp8_dtype = getattr(torch, "float8_e4m3fn", torch.uint8)  # an older torch: the bytes alone
        x = torch.zeros((L, R * M, H), dtype=fp8_dtype if fp8 else torch.bfloat16)
        scales = torch.ones((L, R * M, H // 128)) if fp8 else None
        self.output = DispatchOutput(x, scales, torch.zeros((L, R * M, 4), dtype=torch.int32),
                                     torch.zeros((L, R), dtype=torch.int32))
        self.layout = SimpleNamespace(regions={"recvScales": SimpleNamespace(bytes=0 if scales is None else 1)})

    def region(self, name):
        return {"recvX": self.output.x, "recvScales": self.output.scales}[name]

    def dispatch_send(self, x, idx, weights):
        assert weights is None
        self.calls.append("dispatch_send")

    def dispatch_recv(self):
        self.calls.append("dispatch_recv")
        return self.output

    def combine_send(self, rows):
        self.calls.append("combine_send")

    def combine_recv(self, idx, weights, out):
        self.calls.append("combine_recv" if float(weights.abs().sum()) else "combine_recv(discarded)")
        return out


def _state(dispatch_dtype="bf16"):
    from switchyard_cuda.deep_ep.endpoint_state import EndpointState

    config = Config(**BASE, dispatch_dtype=dispatch_dtype, combine_weights="home")
    shape = (config.local_experts, config.ranks * config.max_tokens_per_rank, config.hidden)
    ep = RecordingEndpoint(config)
    return EndpointState(ep, lambda: torch.zeros(shape, dtype=torch.bfloat16)), ep, shape


@needs_torch
@pytest.mark.parametrize("dispatch_dtype", ["bf16", "fp8-e4m3"])
def test_a_second_dispatch_first_combines_the_uncombined_step(dispatch_dtype):
    state, ep, shape = _state(dispatch_dtype)
    x, idx = torch.zeros((3, BASE["hidden"]), dtype=torch.bfloat16), torch.zeros((3, 4), dtype=torch.int64)
    state.dispatch_send(x, idx)
    state.dispatch_recv()
    state.dispatch_send(x, idx)
    assert ep.calls == ["dispatch_send", "dispatch_recv", "combine_send", "combine_recv(discarded)", "dispatch_send"]


@needs_torch
def test_a_second_combine_of_one_dispatch_repeats_the_dispatch_first():
    state, ep, shape = _state()
    x, idx = torch.zeros((3, BASE["hidden"]), dtype=torch.bfloat16), torch.zeros((3, 4), dtype=torch.int64)
    w, y = torch.ones((3, 4)), torch.empty((3, BASE["hidden"]), dtype=torch.bfloat16)
    state.dispatch_send(x, idx)
    state.dispatch_recv()
    step = state.handle(BASE["hidden"], BASE["experts"]).step
    for _ in range(2):
        state.combine_send(torch.zeros(shape, dtype=torch.bfloat16), step)
        state.combine_recv(idx, w, y)
    assert ep.calls == ["dispatch_send", "dispatch_recv", "combine_send", "combine_recv",
                        "dispatch_send", "dispatch_recv", "combine_send", "combine_recv"]


@needs_torch
def test_out_of_order_calls_are_phase_errors():
    state, ep, shape = _state()
    x, idx = torch.zeros((3, BASE["hidden"]), dtype=torch.bfloat16), torch.zeros((3, 4), dtype=torch.int64)
    with pytest.raises(PhaseError, match="a hook runs once"):
        state.dispatch_recv()
    state.dispatch_send(x, idx)
    with pytest.raises(PhaseError, match="call the hook"):
        state.dispatch_send(x, idx)
    state.dispatch_recv()
    old = state.step
    state.dispatch_send(x, idx)
    state.dispatch_recv()
    with pytest.raises(PhaseError, match="the handle is of dispatch 1"):
        state.combine_send(torch.zeros(shape, dtype=torch.bfloat16), old)
    with pytest.raises(InvalidArgumentError, match="expected a contiguous torch.bfloat16"):
        state.combine_send(torch.zeros(shape, dtype=torch.float32), state.step)
    with pytest.raises(InvalidArgumentError, match="at most the maximum"):
        state.dispatch_send(torch.zeros((9, BASE["hidden"]), dtype=torch.bfloat16), torch.zeros((9, 4), dtype=torch.int64))
