"""Torch tensors from the bench's files and the random data every peer uses."""

import torch

from manifest import load_routing


def routing(m, point, set_index, rank, idx_dtype):
    """topk_idx [T, K] as idx_dtype and topk_weights [T, K] float32, on the current GPU."""
    t, k = point["tokens"], m["topK"]
    idx, w = load_routing(m, point, set_index, rank)
    idx = torch.tensor(idx, dtype=torch.int32).view(t, k).to(idx_dtype)
    w = torch.tensor(w, dtype=torch.float32).view(t, k)
    return idx.cuda(), w.cuda()


def random_bf16(shape, seed):
    """Normal bf16 values from a fixed seed (never all zeros)."""
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(torch.bfloat16)


def cast_fp8(x):
    """Per-128-column block fp8-e4m3 with fp32 scales (amax / 448): (x [T, H] fp8, scales [T, H/128])."""
    t, h = x.shape
    blocks = x.float().view(t, h // 128, 128)
    scales = blocks.abs().amax(dim=2).clamp(min=1e-4) / 448.0
    q = (blocks / scales.unsqueeze(2)).to(torch.float8_e4m3fn).view(t, h)
    return q.contiguous(), scales.contiguous()


def seed_of(m, set_index, rank, salt):
    return m["seed"] * 1_000_003 + set_index * 4096 + rank * 16 + salt


def counts_mismatch(what, got, want):
    """The first count that differs from the routing's, as an error line; None when all agree."""
    got = [int(v) for v in got]
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"{what}[{i}] = {g}, the routing gives {w}"
    return None
