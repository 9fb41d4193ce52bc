"""sy_error_info code 7: a send kernel refused a bad topk_idx entry before anything was sent. The
error names the token, the slot and the expert (never a peer rank), in core's words."""

import ctypes
from types import SimpleNamespace

import pytest

from switchyard_cuda import Config, Endpoint, InvalidArgumentError, _abi, error_for
from switchyard_cuda._abi import SyErrorInfo
from switchyard_cuda.errors import CODES, NO_PEER


def bad(stage: int, token: int, slot: int, expert: int, first_slot=None) -> SyErrorInfo:
    high = 0 if first_slot is None else first_slot + 1
    return SyErrorInfo(
        code=7, stage=stage, peer=expert & 0xFFFFFFFF, region=NO_PEER, detail0=token, detail1=(high << 16) | slot
    )


def test_code_7_is_bad_input():
    assert CODES[7] == "bad input"


@pytest.mark.parametrize(("expert", "stage", "stage_name"), [(256, 3, "dispatch send"), (-2, 2, "combine recv")])
def test_an_entry_outside_the_experts(expert, stage, stage_name):
    e = error_for(1, "sy_endpoint_check", "", rank=1, info=bad(stage, 5, 3, expert), experts=256)
    assert isinstance(e, InvalidArgumentError) and isinstance(e, ValueError)
    assert (e.token, e.slot, e.expert, e.first_slot) == (5, 3, expert, None)
    assert (e.code, e.stage, e.region) == ("bad input", stage_name, None)
    assert e.peer is None and "peer" not in str(e)
    assert f"topk_idx[5][3] = {expert} is outside [-1, 256)" in str(e)
    assert f"(rank 1, stage {stage_name})" in str(e)


def test_the_expert_count_comes_from_the_librarys_message_when_not_given():
    msg = "endpoint_checks.cc:88: dispatch send: topk_idx[0][1] = 70000 is outside [-1, 64)"
    e = error_for(1, "sy_endpoint_check", msg, info=bad(3, 0, 1, 70000))
    assert "topk_idx[0][1] = 70000 is outside [-1, 64)" in str(e) and "endpoint_checks.cc:88" in str(e)
    assert str(e).count("is outside") == 1
    unknown = error_for(1, "sy_endpoint_check", "refused", info=bad(3, 0, 1, 70000))
    assert "topk_idx[0][1] = 70000 is outside [-1, experts) (refused)" in str(unknown)


def test_an_expert_named_twice_in_one_token():
    e = error_for(1, "sy_endpoint_check", "", rank=0, info=bad(3, 9, 4, 17, first_slot=0), experts=32)
    assert (e.token, e.slot, e.expert, e.first_slot) == (9, 4, 17, 0)
    assert e.peer is None and "peer" not in str(e)
    assert "topk_idx[9] names expert 17 twice (slots 0 and 4)" in str(e)
    later = error_for(1, "c", "", info=bad(2, 65535, 65535, 3, first_slot=65533))
    assert (later.token, later.slot, later.first_slot) == (65535, 65535, 65533)
    assert "topk_idx[65535] names expert 3 twice (slots 65533 and 65535)" in str(later)


def test_other_codes_keep_their_peer():
    info = SyErrorInfo(code=6, stage=1, peer=2, region=3, detail0=1, detail1=4)
    e = error_for(5, "sy_endpoint_check", "m", info=info)
    assert e.peer == 2 and e.token is None and e.expert is None and "peer 2" in str(e)


def test_endpoint_check_decodes_it_with_the_configs_expert_count():
    def check(handle, stream, out):
        info = bad(3, 2, 1, 300)
        ctypes.memmove(out, ctypes.byref(info), ctypes.sizeof(info))
        return 1

    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(check)
    fn.restype, fn.argtypes = _abi.CUDA_FUNCTIONS["sy_endpoint_check"]
    ep = Endpoint.__new__(Endpoint)  # no GPU: only what check() reads
    ep.runtime, ep._handle, ep._stream = SimpleNamespace(rank=2), ctypes.c_void_p(1), lambda stream: None
    ep.config = Config(ranks=2, experts=64, top_k=2, hidden=128, max_tokens_per_rank=8)
    ep.lib = SimpleNamespace(sy_endpoint_check=fn, sy_last_error=lambda handle: b"")
    with pytest.raises(InvalidArgumentError) as e:
        ep.check()
    assert (e.value.rank, e.value.token, e.value.slot, e.value.expert) == (2, 2, 1, 300)
    assert "topk_idx[2][1] = 300 is outside [-1, 64)" in str(e.value)
