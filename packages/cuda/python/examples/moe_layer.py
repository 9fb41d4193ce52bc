"""One MoE layer over Switchyard, checked against a plain torch reference.

    torchrun --nproc-per-node 4 examples/moe_layer.py [--layout contiguous] [--graph] [--transport put]

router (softmax top-k) -> dispatch -> grouped-GEMM stand-in (one [H, H] matrix per expert,
applied to every row of the expert's block) -> combine, then y is compared with
sum_k w[t, k] * (x[t] @ W[idx[t, k]]) computed by each rank for its own tokens.
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist

from switchyard_cuda import Config, Endpoint, Runtime, compute_layout


def expert_forward(ep: Endpoint, out, weights: torch.Tensor) -> torch.Tensor:
    """The grouped GEMM stand-in: expert_out rows = recv rows @ W[local expert] (bf16 in, fp32 math)."""
    c, lay = ep.config, ep.layout
    if c.layout == "masked":
        x = out.x.reshape(c.local_experts, -1, c.hidden).float()
        return torch.bmm(x, weights).to(torch.bfloat16).reshape(lay.rows, c.hidden)
    local = out.meta[:, 3].long().clamp(0, c.local_experts - 1)
    return torch.bmm(out.x.float().unsqueeze(1), weights[local]).squeeze(1).to(torch.bfloat16)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layout", default="masked", choices=["masked", "contiguous"])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--graph", action="store_true", help="capture the layer into a CUDA graph and replay it")
    ap.add_argument(
        "--transport",
        default="auto",
        choices=["auto", "put"],
        help="put: NVSHMEM puts to every other rank, as to a peer on another host (default: stores where NVLink maps it)",
    )
    args = ap.parse_args()
    # NCCL refuses several processes on one GPU; the bootstrap only broadcasts the unique id, so gloo serves there.
    shared = int(os.environ.get("WORLD_SIZE", "1")) > torch.cuda.device_count()
    dist.init_process_group("gloo" if shared else "nccl")
    rank, ranks = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    config = Config(ranks=ranks, experts=8 * ranks, top_k=4, hidden=512, max_tokens_per_rank=args.tokens,
                    layout=args.layout, expert_alignment=16 if args.layout == "contiguous" else 1)
    layout = compute_layout(config)
    if rank == 0:
        print(layout.describe())
    rt = Runtime.from_torch_distributed(symmetric_bytes=layout.symmetric_bytes, transport=args.transport)
    ep = Endpoint(rt, config, timeout_ms=20_000)
    gen = torch.Generator(device="cuda").manual_seed(1234)  # same experts on every rank
    w_all = torch.randn(config.experts, config.hidden, config.hidden, device="cuda", generator=gen) / config.hidden**0.5
    w_router = torch.randn(config.hidden, config.experts, device="cuda", generator=gen)
    mine = w_all[rank * config.local_experts:(rank + 1) * config.local_experts].contiguous()
    torch.manual_seed(rank)
    x = torch.randn(args.tokens, config.hidden, device="cuda").to(torch.bfloat16)

    def layer(x: torch.Tensor):
        probs = torch.softmax(x.float() @ w_router, dim=-1)
        w, idx = probs.topk(config.top_k, dim=-1)
        idx, w = idx.to(torch.int32), (w / w.sum(-1, keepdim=True)).float()
        out = ep.dispatch(x, idx, w)
        y = ep.combine(expert_forward(ep, out, mine), idx)
        return y, idx, w

    y, idx, w = layer(x)
    if args.graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y_g, idx, w = layer(x)
        for _ in range(3):
            g.replay()
        y = y_g
    ep.check()
    per_slot = torch.einsum("th,tkhd->tkd", x.float(), w_all[idx.long()])
    ref = (w.unsqueeze(-1) * per_slot.to(torch.bfloat16).float()).sum(1)
    err = (y.float() - ref).abs().max().item()
    ok = torch.allclose(y.float(), ref, atol=3e-2, rtol=3e-2)
    print(f"rank {rank}: {args.layout}{' graph' if args.graph else ''}{' put' if args.transport == 'put' else ''} max |y - ref| = {err:.3e} {'PASS' if ok else 'FAIL'}")
    dist.barrier()
    ep.destroy()
    rt.destroy()
    dist.destroy_process_group()
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
