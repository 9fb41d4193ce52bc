"""DeepEP V1's normal (high-throughput) intranode kernels (Buffer.get_dispatch_layout, dispatch,
combine) on the contiguous points, on Buffer.set_num_sms(--sms) SMs, its recommended configs for
the rank count, one NVLink buffer sized by the configs' hints.

It does less than Switchyard's contiguous layout: dispatch takes fp8 rows the caller already cast
(x [T, H] float8_e4m3fn with scales [T, H/128] fp32; the cast happens here before the timed region)
and returns rows per source rank ([received, H], each token once per rank), which the caller still
permutes per expert; combine takes one bf16 row per received token, already reduced over the rank's
experts and weighted by the caller, and sums them at home without weights.
"""

import torch
import torch.distributed as dist

from manifest import expected_counts
from tensors import cast_fp8, counts_mismatch, random_bf16, routing, seed_of
from timing import describe, time_steps

IMPL = "deepep-ht"
LAYOUT = "contiguous"

NOTES = [
    "does less than switchyard: the caller casts to fp8 before dispatch (not timed here) and permutes the "
    "received rows (per source rank) per expert after; combine takes rows already reduced over the rank's "
    "experts and weighted, and sums them without weights; compare with switchyard run with --input fp8-e4m3"
]


def probe():
    import deep_ep

    return getattr(deep_ep, "__version__", None)


class Session:
    def __init__(self, m, points, group):
        import deep_ep

        self.deep_ep = deep_ep
        self.m = m
        self.rank = dist.get_rank()
        r = m["ranks"]
        self.sms = m["sms"] + (m["sms"] % 2)  # DeepEP asks for an even count
        deep_ep.Buffer.set_num_sms(self.sms)
        self.dispatch_config = deep_ep.Buffer.get_dispatch_config(r)
        self.combine_config = deep_ep.Buffer.get_combine_config(r)
        hidden_bytes = m["hidden"] * 2
        self.nvl_bytes = max(
            c.get_nvl_buffer_size_hint(hidden_bytes, r) for c in (self.dispatch_config, self.combine_config)
        )
        self.buffer = deep_ep.Buffer(group, num_nvl_bytes=self.nvl_bytes, num_rdma_bytes=0, explicitly_destroy=True)

    def point(self, p):
        m, b = self.m, self.buffer
        r, h, e = m["ranks"], m["hidden"], m["experts"]
        t = p["tokens"]
        fp8 = m["dispatchDtype"] == "fp8-e4m3"
        notes = list(NOTES)
        if self.sms != m["sms"]:
            notes.append(f"{self.sms} SMs (DeepEP takes an even count; --sms {m['sms']})")
        combine_in = random_bf16((t * r, h), seed_of(m, 0, self.rank, 9))
        states = []
        for s in range(m["rotate"]):
            idx, w = routing(m, p, s, self.rank, self.deep_ep.topk_idx_t)
            x = random_bf16((t, h), seed_of(m, s, self.rank, 1))
            states.append({"x": cast_fp8(x) if fp8 else x, "idx": idx, "w": w})

        def calls(st):
            def dispatch():
                per_rank, _, per_expert, in_rank, _ = b.get_dispatch_layout(st["idx"], e)
                recv, _, _, counts, st["handle"], _ = b.dispatch(
                    st["x"],
                    num_tokens_per_rank=per_rank,
                    is_token_in_rank=in_rank,
                    num_tokens_per_expert=per_expert,
                    topk_idx=st["idx"],
                    topk_weights=st["w"],
                    config=self.dispatch_config,
                )
                st["rows"] = (recv[0] if isinstance(recv, tuple) else recv).size(0)
                st["counts"] = counts

            def combine():
                b.combine(combine_in[: st["rows"]], st["handle"], config=self.combine_config)

            return [dispatch, combine]

        run = [calls(st) for st in states]
        samples = time_steps(run, m["warmup"], m["steps"])
        last = (m["warmup"] + m["steps"] - 1) % m["rotate"]
        errors = []
        bad = counts_mismatch("num_recv_tokens_per_expert", states[last]["counts"], expected_counts(m, p, last, self.rank))
        if bad:
            errors.append(f"rank {self.rank}: {bad}")
        return {
            "mode": "eager",
            "timing": describe("eager", "dispatch = get_dispatch_layout + dispatch (it waits on the host for the "
                               "received counts), combine; no halves", m["steps"]),
            "notes": notes,
            "samplesUs": samples,
            "deviceBytes": self.nvl_bytes,
            "sms": self.sms,
            "errors": errors,
        }

    def close(self):
        torch.cuda.synchronize()
        dist.barrier()
        self.buffer.destroy()
