"""Checks bench-peers/expert_permute.py against plain loops on the CPU (any torch; fp8 rows where the
torch has float8_e4m3fn): `python3 expertPermute.py BENCH_PEERS_DIR SEED` prints "ok" or fails with
the case's seed (run again with it to replay)."""

import sys

import torch

sys.path.insert(0, sys.argv[1])
from expert_permute import permute, reduce_tokens  # noqa: E402


def case(seed, received, topk, local, hidden, fp8):
    g = torch.Generator().manual_seed(seed)
    # Each received token names up to topk distinct local experts; the other slots are -1.
    idx = torch.full((received, topk), -1, dtype=torch.int64)
    for n in range(received):
        mine = torch.randperm(local, generator=g)[: int(torch.randint(0, topk + 1, (1,), generator=g))]
        slots = torch.randperm(topk, generator=g)[: len(mine)]
        idx[n, slots] = mine
    w = torch.rand((received, topk), generator=g) * (idx >= 0)
    rows = torch.randn((received, hidden), generator=g).to(torch.bfloat16)
    scales = torch.rand((received, hidden // 128), generator=g)
    recv = (rows.to(torch.float8_e4m3fn), scales) if fp8 else (rows, scales)
    counts = [int((idx == e).sum()) for e in range(local)]

    packed = permute(recv, idx, w, counts)
    want = [(n, k) for e in range(local) for n in range(received) for k in range(topk) if idx[n, k] == e]
    assert packed["x"].dtype == recv[0].dtype and packed["x"].shape == (len(want), hidden)
    assert packed["token"].tolist() == [n for n, _ in want]
    assert packed["experts"].tolist() == [int(idx[n, k]) for n, k in want]
    assert packed["weight"].tolist() == [float(w[n, k]) for n, k in want]
    for i, (n, _) in enumerate(want):
        assert torch.equal(packed["x"][i].view(torch.uint8), recv[0][n].view(torch.uint8)), (seed, i)
        assert torch.equal(packed["scales"][i], scales[n]), (seed, i)
    assert permute(rows, idx, w, counts)["scales"] is None

    out = torch.randn((len(want), hidden), generator=g).to(torch.bfloat16)
    y = reduce_tokens(out, packed, received)
    ref = torch.zeros((received, hidden), dtype=torch.float64)
    for i, (n, k) in enumerate(want):
        ref[n] += float(w[n, k]) * out[i].double()
    assert y.dtype == torch.bfloat16 and y.shape == (received, hidden)
    # One rounding to bf16 of an fp32 sum: within a bf16 half-ulp of the exact sum, plus fp32's error.
    err = (y.double() - ref).abs()
    assert bool((err <= ref.abs() * 2.0**-8 + 1e-6).all()), (seed, float(err.max()))


seed = int(sys.argv[2])
fp8 = hasattr(torch, "float8_e4m3fn")
for i in range(8):
    case(seed + i, received=1 + (seed + 7 * i) % 39, topk=4, local=6, hidden=256, fp8=fp8 and i % 2 == 0)
case(seed, received=0, topk=4, local=6, hidden=256, fp8=False)
print("ok", "fp8" if fp8 else "bf16 only")
