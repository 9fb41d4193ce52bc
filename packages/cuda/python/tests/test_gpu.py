"""On one GPU (a world of one rank): a step against the torch reference, a captured step, and the
errors of misuse. Skipped, with the reason, without torch, a GPU or the built library."""

import pytest

from conftest import cuda_skip_reason

reason = cuda_skip_reason()
pytestmark = pytest.mark.skipif(reason is not None, reason=f"GPU tests skipped: {reason}")


@pytest.fixture(scope="module")
def world():
    import torch

    from switchyard_cuda import Config, Endpoint, Runtime, compute_layout

    config = Config(ranks=1, experts=4, top_k=2, hidden=256, max_tokens_per_rank=32)
    torch.cuda.set_device(0)
    import os

    os.environ.setdefault("NVSHMEM_SYMMETRIC_SIZE", str(2**30))
    rt = Runtime(Runtime.get_unique_id(), 0, 1, 0)
    ep = Endpoint(rt, config, timeout_ms=5_000)
    yield config, ep
    ep.destroy()
    rt.destroy()
    assert compute_layout(config).bytes_per_rank > 0


def _inputs(config, T=20):
    import torch

    torch.manual_seed(0)
    x = torch.randn(T, config.hidden, device="cuda").to(torch.bfloat16)
    idx = torch.stack([torch.randperm(config.experts, device="cuda")[: config.top_k] for _ in range(T)]).int()
    w = torch.rand(T, config.top_k, device="cuda")
    return x, idx, w


def test_dispatch_then_combine_of_identity_experts_is_the_weighted_sum(world):
    config, ep = world
    x, idx, w = _inputs(config)
    out = ep.dispatch(x, idx, w)
    assert int(out.counts.sum()) == idx.numel()
    y = ep.combine(out.x.reshape(ep.layout.rows, config.hidden).contiguous(), idx)
    ep.check()
    ref = (w.sum(1, keepdim=True) * x.float())
    assert (y.float() - ref).abs().max().item() < 5e-2


# Before any capture: once a phase has been captured into a graph the endpoint stops checking
# the phase order (graph replays are invisible to the host), so misuse is tested first.
def test_misuse_is_a_named_error(world):
    import torch

    from switchyard_cuda import InvalidArgumentError, PhaseError

    config, ep = world
    x, idx, w = _inputs(config)
    with pytest.raises(InvalidArgumentError):
        ep.dispatch_send(x.float(), idx, w)
    with pytest.raises(PhaseError) as e:
        ep.dispatch_recv(torch.cuda.current_stream())
    assert e.value.status_name == "SY_ERR_PHASE" and e.value.rank == 0


def test_a_captured_step_replays(world):
    import torch

    config, ep = world
    x, idx, w = _inputs(config)
    ep.combine(ep.dispatch(x, idx, w).x.reshape(ep.layout.rows, config.hidden).contiguous(), idx)
    ep.check()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = ep.combine(ep.dispatch(x, idx, w).x.reshape(ep.layout.rows, config.hidden).contiguous(), idx)
    for _ in range(3):
        g.replay()
    ep.check()
    assert (y.float() - w.sum(1, keepdim=True) * x.float()).abs().max().item() < 5e-2
