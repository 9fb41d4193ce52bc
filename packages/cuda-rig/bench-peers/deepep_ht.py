"""DeepEP V1's normal (high-throughput) intranode kernels (Buffer.get_dispatch_layout, dispatch,
combine) on the contiguous points, on Buffer.set_num_sms(--sms) SMs, its recommended configs for
the rank count, one NVLink buffer sized by the configs' hints.

It does less than Switchyard's contiguous layout: dispatch takes fp8 rows the caller already cast
(x [T, H] float8_e4m3fn with scales [T, H/128] fp32; the cast happens here before the timed region)
and returns rows per source rank ([received, H], each token once per rank), which the caller still
permutes per expert; combine takes one bf16 row per received token, already reduced over the rank's
experts and weighted by the caller, and sums them at home without weights. deepep_ht_caller.py times
the same kernels with that caller's work added.
"""

import torch
import torch.distributed as dist

from manifest import expected_counts
from tensors import cast_fp8, counts_mismatch, random_bf16, routing, seed_of
from timing import describe, time_steps

IMPL = "deepep-ht"
LAYOUT = "contiguous"


def probe():
    import deep_ep

    return getattr(deep_ep, "__version__", None)


class Session:
    """One Buffer for the whole run. A point is built from hooks a subclass may change: split and notes
    (the row's texts), prepare (the inputs, before timing), calls (what a step runs), check (errors
    beyond the counts per expert) and device_bytes."""

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

    def exchange(self, x, st):
        """get_dispatch_layout + dispatch of x (bf16 [T, H], or (fp8 [T, H], scales [T, H/128])) routed by
        st's idx / w; keeps the handle and the received count per local expert (a host list) in st.
        Returns (received rows as x's form, recv_topk_idx [N, K] local expert or -1, recv_topk_weights [N, K])."""
        b = self.buffer
        per_rank, _, per_expert, in_rank, _ = b.get_dispatch_layout(st["idx"], self.m["experts"])
        recv, recv_idx, recv_w, st["counts"], st["handle"], _ = b.dispatch(
            x,
            num_tokens_per_rank=per_rank,
            is_token_in_rank=in_rank,
            num_tokens_per_expert=per_expert,
            topk_idx=st["idx"],
            topk_weights=st["w"],
            config=self.dispatch_config,
        )
        return recv, recv_idx, recv_w

    def send_back(self, rows, st):
        """combine of one bf16 row [N, H] per received token (summed at home without weights)."""
        self.buffer.combine(rows, st["handle"], config=self.combine_config)

    def split(self):
        """What the dispatch and combine phases time, for the row's timing text."""
        return (
            "dispatch = get_dispatch_layout + dispatch (it waits on the host for the received counts), combine; "
            "no halves"
        )

    def notes(self):
        """What the reader must know to compare the row."""
        return [
            "does less than switchyard: the caller casts to fp8 before dispatch (not timed here) and permutes the "
            "received rows (per source rank) per expert after; combine takes rows already reduced over the rank's "
            "experts and weighted, and sums them without weights; compare with switchyard run with --input fp8-e4m3"
        ]

    def prepare(self, p, states):
        """Before timing, in each state: the dispatch input (cast to fp8 here when the dispatch is fp8) and
        the rows combine sends, one [T * R, H] bf16 for all (at most every token of every rank comes back)."""
        m = self.m
        combine_in = random_bf16((p["tokens"] * m["ranks"], m["hidden"]), seed_of(m, 0, self.rank, 9))
        for st in states:
            st["x"] = cast_fp8(st["x"]) if m["dispatchDtype"] == "fp8-e4m3" else st["x"]
            st["combine_in"] = combine_in

    def calls(self, st):
        def dispatch():
            recv, _, _ = self.exchange(st["x"], st)
            st["rows"] = (recv[0] if isinstance(recv, tuple) else recv).size(0)

        def combine():
            self.send_back(st["combine_in"][: st["rows"]], st)

        return [dispatch, combine]

    def check(self, st, want):
        """Errors beyond the counts per expert, for the last step's state; `want` the routing's counts."""
        return []

    def device_bytes(self, st):
        return self.nvl_bytes

    def point(self, p):
        m = self.m
        notes = self.notes()
        if self.sms != m["sms"]:
            notes.append(f"{self.sms} SMs (DeepEP takes an even count; --sms {m['sms']})")
        states = []
        for s in range(m["rotate"]):
            idx, w = routing(m, p, s, self.rank, self.deep_ep.topk_idx_t)
            x = random_bf16((p["tokens"], m["hidden"]), seed_of(m, s, self.rank, 1))
            states.append({"x": x, "idx": idx, "w": w})
        self.prepare(p, states)
        samples = time_steps([self.calls(st) for st in states], m["warmup"], m["steps"])
        last = (m["warmup"] + m["steps"] - 1) % m["rotate"]
        want = expected_counts(m, p, last, self.rank)
        bad = [counts_mismatch("num_recv_tokens_per_expert", states[last]["counts"], want)]
        errors = [f"rank {self.rank}: {e}" for e in bad + self.check(states[last], want) if e]
        return {
            "mode": "eager",
            "timing": describe("eager", self.split(), m["steps"]),
            "notes": notes,
            "samplesUs": samples,
            "deviceBytes": self.device_bytes(states[last]),
            "sms": self.sms,
            "errors": errors,
        }

    def close(self):
        torch.cuda.synchronize()
        dist.barrier()
        self.buffer.destroy()
