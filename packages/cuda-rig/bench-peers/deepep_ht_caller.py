"""DeepEP V1's normal intranode kernels (deepep_ht.py's session: the same Buffer, SM setting, configs,
routing and inputs) plus the work their caller adds, written in plain torch (expert_permute.py): the
like-for-like row for Switchyard's contiguous layout, whose dispatch and combine do all of it.

Each step, timed with CUDA events like every peer:
  dispatch = the cast to fp8 (tensors.cast_fp8; bf16 input with fp8 dispatch)
             + get_dispatch_layout + dispatch
             + the permute: every (received token, local expert) entry a row, grouped by local expert,
               x [E, H] with scales [E, H/128]
  combine  = per received token, the sum of its entries' expert outputs weighted by recv_topk_weights
             (fp32, rounded to bf16 once) + combine
The expert outputs ([E, H] bf16 in the permute's order) are random, made before timing. DeepEP's
kernels run on Buffer.set_num_sms(--sms) SMs; the caller's torch ops on the whole GPU.
"""

import deepep_ht
from expert_permute import permute, reduce_tokens
from manifest import expected_counts
from tensors import cast_fp8, counts_mismatch, random_bf16, seed_of

IMPL = "deepep-ht-caller"
LAYOUT = deepep_ht.LAYOUT
probe = deepep_ht.probe


class Session(deepep_ht.Session):
    def timed_cast(self):
        """bf16 input dispatched as fp8: the caller's cast is part of its dispatch."""
        return self.m["inputDtype"] == "bf16" and self.m["dispatchDtype"] == "fp8-e4m3"

    def split(self):
        cast = "cast_fp8 + " if self.timed_cast() else ""
        return (
            f"dispatch = {cast}get_dispatch_layout + dispatch (it waits on the host for the received counts) + the "
            "caller's permute to rows per local expert (stable sort of recv_topk_idx, index_select of rows and "
            "scales); combine = the caller's weighted sum per received token over this rank's experts (fp32 "
            "index_add_ of the expert outputs times recv_topk_weights, one bf16 rounding) + combine; no halves; "
            "the caller's torch ops run on the whole GPU, DeepEP's kernels on the SMs set by set_num_sms"
        )

    def notes(self):
        m = self.m
        if m["inputDtype"] == "fp8-e4m3":
            rows = "run with --input fp8-e4m3 (here too the fp8 input is cast before the timed region)"
        elif m["dispatchDtype"] == "bf16":
            rows = "with bf16 input and --dispatch bf16 (no cast: the rows move as bf16, without scales)"
        else:
            rows = "with bf16 input (the cast to fp8 timed in dispatch)"
        return [
            f"the like-for-like comparison for switchyard's contiguous rows {rows}: DeepEP's normal kernels plus "
            "the work their caller does in plain torch, the permute of the received rows (per source rank) per "
            "local expert and the weighted sum over this rank's experts before combine; switchyard does these itself"
        ]

    def prepare(self, p, states):
        """Before timing: fp8 input cast (it is what that input is), and one [E, H] bf16 of expert outputs
        for all states, E the most entries any state routes to this rank."""
        m = self.m
        if m["inputDtype"] == "fp8-e4m3":
            for st in states:
                st["x"] = cast_fp8(st["x"])
        entries = max(sum(expected_counts(m, p, s, self.rank)) for s in range(len(states)))
        expert_out = random_bf16((entries, m["hidden"]), seed_of(m, 0, self.rank, 9))
        for st in states:
            st["expert_out"] = expert_out

    def calls(self, st):
        cast = self.timed_cast()

        def dispatch():
            recv, st["recv_idx"], recv_w = self.exchange(cast_fp8(st["x"]) if cast else st["x"], st)
            st["packed"] = permute(recv, st["recv_idx"], recv_w, st["counts"])

        def combine():
            entries, out = st["packed"]["token"].size(0), st["expert_out"]
            if entries > out.size(0):
                raise RuntimeError(f"{entries} entries received, more than the routing gives ({out.size(0)})")
            self.send_back(reduce_tokens(out[:entries], st["packed"], st["recv_idx"].size(0)), st)

        return [dispatch, combine]

    def check(self, st, want):
        """The permute's rows: as many as received entries (recv_topk_idx >= 0), and per local expert the
        routing's counts."""
        packed = st["packed"]
        rows, received = packed["x"].size(0), int((st["recv_idx"] >= 0).sum())
        per_expert = packed["experts"].bincount(minlength=len(want)).tolist()
        return [
            None if rows == received else f"permuted rows {rows}, received entries {received}",
            counts_mismatch("permuted rows per expert", per_expert, want),
        ]

    def device_bytes(self, st):
        """DeepEP's buffer and the per-expert layout the caller builds (rows and scales)."""
        packed = st["packed"]
        layout = [t for t in (packed["x"], packed["scales"]) if t is not None]
        return self.nvl_bytes + sum(t.numel() * t.element_size() for t in layout)
