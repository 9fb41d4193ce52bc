"""pplx-kernels' AllToAll on the masked points: the NVSHMEM variant (AllToAll.internode), which its
own benchmark runs on the GPUs of one host too; one AllToAll per point (max_num_tokens = T, dp_size
1); dispatch and combine split into send and receive halves with do_send / do_recv.

Shapes (its benchmark): dp_x [T, H] in the dispatch dtype with dp_x_scale [T, H/128] fp32 for fp8
(the caller casts: done here before the timed region), indices [T, K] uint32, bound_m [1] uint32;
out_expert_x [L, T * R, H], out_expert_x_scale [L, T * R, H/128], out_expert_num_tokens [L] int32;
combine: expert_y [L, T * R, H] bf16, weights [T, K] fp32, out_tokens [T, H] bf16.
"""

import os

import torch
import torch.distributed as dist

from manifest import expected_counts
from tensors import cast_fp8, counts_mismatch, random_bf16, routing, seed_of
from timing import describe, graphs_or_eager, time_steps

IMPL = "pplx"
LAYOUT = "masked"


def probe():
    import pplx_kernels

    return getattr(pplx_kernels, "__version__", None)


def heap_bytes(m, tokens):
    """NVSHMEM symmetric bytes one AllToAll.internode allocates (its constructor's nvshmem_malloc calls)."""
    r, h, e = m["ranks"], m["hidden"], m["experts"]
    local = e // r
    fp8 = m["dispatchDtype"] == "fp8-e4m3"
    row = h * (1 if fp8 else 2) + ((h + 127) // 128 * 4 if fp8 else 0) + 4
    row = (row + 15) // 16 * 16
    batch = local * r * tokens
    return 8 * (2 * local * r + tokens + r) + (tokens + batch) * row + batch * h * 4 + tokens * e * h * 4


class Session:
    def __init__(self, m, points, group):
        from pplx_kernels import nvshmem

        self.nv = nvshmem
        self.m = m
        self.rank = dist.get_rank()
        # One AllToAll lives at a time; NVSHMEM's heap must hold the largest, plus room for NVSHMEM itself.
        need = max(heap_bytes(m, p["tokens"]) for p in points)
        os.environ["NVSHMEM_SYMMETRIC_SIZE"] = str(need + need // 4 + 2**29)
        uid = [nvshmem.nvshmem_get_unique_id().tolist() if self.rank == 0 else None]
        dist.broadcast_object_list(uid, src=0)
        nvshmem.nvshmem_init(torch.tensor(uid[0], dtype=torch.uint8), self.rank, m["ranks"])

    def point(self, p):
        from pplx_kernels import AllToAll

        m = self.m
        r, h, e, k = m["ranks"], m["hidden"], m["experts"], m["topK"]
        t = p["tokens"]
        local = e // r
        fp8 = m["dispatchDtype"] == "fp8-e4m3"
        dtype = torch.float8_e4m3fn if fp8 else torch.bfloat16
        blocks = (h + 127) // 128
        notes = []
        if fp8:
            notes.append("the caller casts to fp8 before dispatch (not timed here); switchyard casts in its dispatch")
        ata = AllToAll.internode(
            max_num_tokens=t,
            num_experts=e,
            experts_per_token=k,
            rank=self.rank,
            world_size=r,
            dp_size=1,
            hidden_dim=h,
            hidden_dim_bytes=h * dtype.itemsize,
            hidden_dim_scale_bytes=blocks * 4 if fp8 else 0,
        )
        try:
            num_tokens = torch.empty(local, dtype=torch.int32, device="cuda")
            expert_x = torch.empty((local, t * r, h), dtype=dtype, device="cuda")
            expert_scale = torch.empty((local, t * r, blocks), dtype=torch.float32, device="cuda") if fp8 else None
            expert_y = random_bf16((local, t * r, h), seed_of(m, 0, self.rank, 7))
            y = torch.empty((t, h), dtype=torch.bfloat16, device="cuda")
            bound = torch.tensor([t], dtype=torch.uint32, device="cuda")
            states = []
            for s in range(m["rotate"]):
                idx, w = routing(m, p, s, self.rank, torch.int32)
                x = random_bf16((t, h), seed_of(m, s, self.rank, 1))
                xq, xs = cast_fp8(x) if fp8 else (x, None)
                states.append({"x": xq, "scale": xs, "idx": idx.cpu().to(torch.uint32).cuda(), "w": w})

            def calls(st):
                def dispatch(send, recv):
                    ata.dispatch(num_tokens, expert_x, expert_scale, st["x"], st["scale"], st["idx"], bound,
                                 do_send=send, do_recv=recv)

                def combine(send, recv):
                    ata.combine(y, st["idx"], st["w"], expert_y, bound, do_send=send, do_recv=recv)

                return [lambda: dispatch(True, False), lambda: dispatch(False, True),
                        lambda: combine(True, False), lambda: combine(False, True)]

            eager = [calls(st) for st in states]
            for c in eager[0]:
                c()
            torch.cuda.synchronize()
            mode, run = graphs_or_eager(m, eager, notes, torch.cuda.synchronize)
            samples = time_steps(run, m["warmup"], m["steps"])
            last = (m["warmup"] + m["steps"] - 1) % m["rotate"]
            errors = []
            bad = counts_mismatch("expert_num_tokens", num_tokens.tolist(), expected_counts(m, p, last, self.rank))
            if bad:
                errors.append(f"rank {self.rank}: {bad}")
            out_bytes = sum(x.numel() * x.element_size() for x in (expert_x, expert_scale) if x is not None)
            return {
                "mode": mode,
                "timing": describe(mode, "send / recv halves split by do_send / do_recv", m["steps"]),
                "notes": notes,
                "samplesUs": samples,
                "deviceBytes": heap_bytes(m, t) + out_bytes,
                "sms": None,
                "errors": errors,
            }
        finally:
            torch.cuda.synchronize()
            dist.barrier()
            ata.destroy()

    def close(self):
        torch.cuda.synchronize()
        dist.barrier()
        self.nv.nvshmem_finalize()
