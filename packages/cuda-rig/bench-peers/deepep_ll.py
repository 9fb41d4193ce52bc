"""DeepEP V1's low-latency kernels (Buffer.low_latency_dispatch / low_latency_combine) on the
masked points: one low-latency Buffer for the whole run, sized for the largest point; the calls
split into send and receive halves with return_recv_hook=True (the hook launches the receive).

Shapes (DeepEP's documentation): x [T, H] bf16 (the kernel casts to fp8 per 128 columns when
use_fp8), topk_idx [T, K] deep_ep.topk_idx_t, received rows [L, R * maxT, H] per local expert with
counts [L]; combine takes expert outputs [L, R * maxT, H] bf16 and the weights, returns y [T, H].
"""

import os

import torch
import torch.distributed as dist

from manifest import expected_counts
from tensors import counts_mismatch, random_bf16, routing, seed_of
from timing import describe, graphs_or_eager, time_steps

IMPL = "deepep-ll"
LAYOUT = "masked"


def probe():
    import deep_ep

    return getattr(deep_ep, "__version__", None)


def max_tokens(tokens, ranks):
    """DeepEP's low-latency dispatch asserts ranks * num_max_dispatch_tokens_per_rank % 4 == 0 (its TMA
    copies of the scales): the smallest maximum >= tokens that passes. T tokens are still sent."""
    t = tokens
    while (t * ranks) % 4:
        t += 1
    return t


class Session:
    def __init__(self, m, points, group):
        import deep_ep

        self.deep_ep = deep_ep
        self.m = m
        self.rank = dist.get_rank()
        r, h, e = m["ranks"], m["hidden"], m["experts"]
        largest = max(max_tokens(p["tokens"], r) for p in points)
        # Its Python wrapper asserts NVSHMEM_QP_DEPTH >= 2 * (maxT + 1) (default 1024, so 512 tokens fail).
        depth = 1024
        while depth < 2 * (largest + 1):
            depth *= 2
        os.environ["NVSHMEM_QP_DEPTH"] = str(depth)
        self.rdma_bytes = deep_ep.Buffer.get_low_latency_rdma_size_hint(largest, h, r, e)
        self.buffer = deep_ep.Buffer(
            group,
            num_rdma_bytes=self.rdma_bytes,
            low_latency_mode=True,
            num_qps_per_rank=e // r,
            allow_nvlink_for_low_latency_mode=True,
            explicitly_destroy=True,
        )

    def point(self, p):
        m, b = self.m, self.buffer
        r, h, e = m["ranks"], m["hidden"], m["experts"]
        t = p["tokens"]
        local = e // r
        nmax = max_tokens(t, r)
        fp8 = m["dispatchDtype"] == "fp8-e4m3"
        notes = []
        if nmax != t:
            notes.append(
                f"num_max_dispatch_tokens_per_rank {nmax} (ranks x max must be a multiple of 4); {t} tokens sent"
            )
        if m["inputDtype"] != "bf16":
            notes.append("input bf16: the low-latency dispatch takes bf16 only and casts to fp8 itself")

        def reset():
            torch.cuda.synchronize()
            b.clean_low_latency_buffer(nmax, h, e)
            torch.cuda.synchronize()
            dist.barrier()

        reset()  # the previous point used another maximum: its signal words sit elsewhere
        expert_y = random_bf16((local, r * nmax, h), seed_of(m, 0, self.rank, 7))
        y = torch.empty((t, h), dtype=torch.bfloat16, device="cuda")
        states = []
        for s in range(m["rotate"]):
            idx, w = routing(m, p, s, self.rank, self.deep_ep.topk_idx_t)
            states.append({"x": random_bf16((t, h), seed_of(m, s, self.rank, 1)), "idx": idx, "w": w})

        def calls(st):
            def dispatch_send():
                recv, st["count"], st["handle"], _, st["dhook"] = b.low_latency_dispatch(
                    st["x"], st["idx"], nmax, e, use_fp8=fp8, async_finish=False, return_recv_hook=True
                )
                st["recv"] = recv

            def combine_send():
                _, _, st["chook"] = b.low_latency_combine(
                    expert_y, st["idx"], st["w"], st["handle"], async_finish=False, return_recv_hook=True, out=y
                )

            return [dispatch_send, lambda: st["dhook"](), combine_send, lambda: st["chook"]()]

        eager = [calls(st) for st in states]
        for c in eager[0]:  # one eager step before any capture
            c()
        torch.cuda.synchronize()
        mode, run = graphs_or_eager(m, eager, notes, reset)
        samples = time_steps(run, m["warmup"], m["steps"])
        last = (m["warmup"] + m["steps"] - 1) % m["rotate"]
        errors = []
        bad = counts_mismatch("recv_count", states[last]["count"].tolist(), expected_counts(m, p, last, self.rank))
        if bad:
            errors.append(f"rank {self.rank}: {bad}")
        recv = states[last]["recv"]
        recv_bytes = sum(x.numel() * x.element_size() for x in (recv if isinstance(recv, tuple) else (recv,)))
        return {
            "mode": mode,
            "timing": describe(mode, "send / recv halves split by return_recv_hook", m["steps"]),
            "notes": notes,
            "samplesUs": samples,
            "deviceBytes": self.rdma_bytes + recv_bytes,
            "sms": None,
            "errors": errors,
        }

    def close(self):
        torch.cuda.synchronize()
        dist.barrier()
        self.buffer.destroy()
