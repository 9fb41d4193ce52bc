"""C statuses to Python exceptions: names, classes, and sy_error_info's rank / peer / stage."""

import builtins

import pytest

from switchyard_cuda import ProtocolError, StateError, SyError, SyTimeoutError, error_for
from switchyard_cuda._abi import SyErrorInfo
from switchyard_cuda.errors import ERROR_CLASSES, STATUS_NAMES


def test_every_status_has_its_named_class():
    for status, name in STATUS_NAMES.items():
        if status == 0:
            continue
        e = error_for(status, "sy_call", "what failed")
        assert type(e) is ERROR_CLASSES[status] and e.status == status and e.status_name == name
        assert str(e).startswith(f"{name} from sy_call")
    assert type(error_for(99, "sy_call", "x")) is SyError


def test_timeout_names_rank_peer_and_stage_and_is_a_builtin_timeout():
    info = SyErrorInfo(code=1, stage=1, peer=3, region=0, detail0=0, detail1=0)
    e = error_for(4, "sy_endpoint_check", "endpoint.cc:1: dispatch recv timed out", rank=1, info=info)
    assert isinstance(e, SyTimeoutError) and isinstance(e, builtins.TimeoutError)
    assert (e.rank, e.peer, e.stage, e.region, e.code) == (1, 3, "dispatch recv", "dispatchSignal", "timeout")
    assert "rank 1, stage dispatch recv, peer 3" in str(e)


def test_protocol_error_carries_the_counts():
    info = SyErrorInfo(code=4, stage=2, peer=2, region=5, detail0=7, detail1=5)
    e = error_for(5, "sy_endpoint_check", "expert rank 2 announced 7 rows", rank=0, info=info)
    assert isinstance(e, ProtocolError) and (e.detail0, e.detail1, e.region) == (7, 5, "combineSignal")


def test_no_peer_and_no_info():
    info = SyErrorInfo(code=3, stage=2, peer=0xFFFFFFFF, region=5, detail0=0, detail1=0)
    assert error_for(5, "c", "m", info=info).peer is None
    assert error_for(7, "c", "m").stage is None and isinstance(error_for(7, "c", "m"), StateError)


def test_names_match_the_librarys_table_where_it_loads():
    from switchyard_cuda import _abi
    from switchyard_cuda.errors import LibraryNotFoundError

    try:
        lib = _abi.load("cuda")
    except LibraryNotFoundError as e:
        pytest.skip(f"libswitchyard_cuda not loadable: {str(e).splitlines()[0]}")
    for status, name in STATUS_NAMES.items():
        assert lib.sy_status_name(status).decode() == name
    assert lib.sy_status_name(11) is None


def test_region_names_are_the_c_layouts_region_order(layout_lib):
    from switchyard_cuda.errors import REGION_NAMES

    names = [layout_lib.sy_layout_param_name(i).decode() for i in range(layout_lib.sy_layout_param_count())]
    regions = tuple(n[: -len(".offset")] for n in names if n.endswith(".offset"))
    assert REGION_NAMES == regions


def test_the_contiguous_send_wait_and_a_bad_route_record_are_named():
    timeout = SyErrorInfo(code=1, stage=3, peer=2, region=4, detail0=0, detail1=0)
    e = error_for(4, "sy_endpoint_check", "dispatch send timed out", rank=0, info=timeout)
    assert (e.stage, e.peer, e.region, e.code) == ("dispatch send", 2, "countSignal", "timeout")
    bad = SyErrorInfo(code=6, stage=1, peer=1, region=3, detail0=7, detail1=5)
    e = error_for(5, "sy_endpoint_check", "bad record", rank=0, info=bad)
    assert (e.stage, e.region, e.code) == ("dispatch recv", "dispatchRoutes", "bad route record")
