"""One Switchyard endpoint per low-latency config, the buffers its steps reuse, and the step in flight.

A Switchyard endpoint runs steps in order: dispatch send, dispatch recv, combine send, combine recv.
DeepEP's API also lets a caller dispatch again before combining, and combine one dispatch twice.
Both are kept correct here at the cost of one extra collective round, which every rank takes since
every rank makes the same calls:
- a dispatch while the previous one of the config is received but not combined first completes
  that step with a combine whose output is discarded;
- a combine of the latest dispatch after it was combined first repeats that dispatch (same input
  tensor, same routing), then combines it.
"""

from __future__ import annotations

from .handle import LowLatencyHandle, fill_handle, fill_ue8m0
from .options import invalid, out_of_order

IDLE, SENT, RECEIVED, COMBINE_SENT = "idle", "dispatch sent", "dispatch received", "combine sent"


class EndpointState:
    """The endpoint of one (max tokens, hidden, experts, top-k, dispatch dtype, scale format)."""

    def __init__(self, endpoint, combine_buffer) -> None:
        import torch

        self.ep, self.config = endpoint, endpoint.config
        self.combine_buffer = combine_buffer  # a function giving the config's bf16 [L, R*M, H] buffer
        c = self.config
        L, R, M, H, K = c.local_experts, c.ranks, c.max_tokens_per_rank, c.hidden, c.top_k
        self.x = endpoint.region("recvX")  # [L, R*M, H] dispatch dtype
        self.scales = endpoint.region("recvScales") if endpoint.layout.regions["recvScales"].bytes else None
        dev = self.x.device
        i32 = dict(dtype=torch.int32, device=dev)
        # Shapes: idx / combine_idx [M, K] int32 (DeepEP's int64 topk_idx converted), recv_count [L],
        # layout_range [L, R] int64, src_info [L, R*M] int32.
        self.idx, self.combine_idx = torch.empty((M, K), **i32), torch.empty((M, K), **i32)
        self.recv_count = torch.zeros((L,), **i32)
        self.layout_range = torch.zeros((L, R), dtype=torch.int64, device=dev)
        self.src_info = torch.zeros((L, R * M), **i32)
        self.shape = (L, R * M, H)
        self.packed = self.shifted = None
        if c.dispatch_dtype == "fp8-e4m3" and c.scale_format == "ue8m0":
            S = H // 128
            words = -(-S // 4)
            self.shifted = torch.empty((L, R * M, S), **i32)
            self.packed_bytes = torch.zeros((L, R * M, 4 * words), dtype=torch.uint8, device=dev)
            self.packed = self.packed_bytes.view(torch.int32)  # [L, R*M, ceil(S/4)]
        self.phase, self.step = IDLE, 0
        self.last_x, self.last_tokens = None, 0
        self._zero_weights = self._scratch_y = None

    # -- dispatch -------------------------------------------------------------------------------
    def dispatch_send(self, x, topk_idx) -> None:
        """The send half (the receive comes with the hook: dispatch_recv)."""
        self.ep.dispatch_send(x, self._begin_dispatch(x, topk_idx), None)
        self._sent(x, int(topk_idx.shape[0]))

    def dispatch(self, x, topk_idx, stats=None) -> None:
        """Both halves in one call (one kernel launch: the one "dispatch" kernel a profiler sees)."""
        out = self.ep.dispatch(x, self._begin_dispatch(x, topk_idx), None)
        self._sent(x, int(topk_idx.shape[0]))
        self._received(out, stats)

    def _begin_dispatch(self, x, topk_idx):
        """Checks a dispatch's arguments and the config's step order; returns topk_idx as int32."""
        call = "Buffer.low_latency_dispatch"
        T = int(topk_idx.shape[0])
        if T > self.config.max_tokens_per_rank or int(x.shape[0]) != T:
            raise invalid(call, f"x has {int(x.shape[0])} tokens, topk_idx {T}, num_max_dispatch_tokens_per_rank is "
                                f"{self.config.max_tokens_per_rank}: pass as many rows of each, at most the maximum")
        if self.phase == RECEIVED:
            self._finish_uncombined()
        elif self.phase != IDLE:
            raise out_of_order(call, f"the config's last step is at '{self.phase}': call the hook that call returned first")
        idx = self.idx[:T]
        idx.copy_(topk_idx)
        return idx

    def _sent(self, x, T: int) -> None:
        self.phase, self.last_x, self.last_tokens = SENT, x, T
        self.step += 1

    def dispatch_recv(self, stats=None) -> None:
        if self.phase != SENT:
            raise out_of_order("Buffer.low_latency_dispatch hook", f"called at '{self.phase}': a hook runs once, after its dispatch")
        self._received(self.ep.dispatch_recv(), stats)

    def _received(self, out, stats) -> None:
        """The handle's tables, the packed UE8M0 scales and the caller's statistics from the step's output."""
        fill_handle(out.counts, out.meta, self.recv_count, self.layout_range, self.src_info)
        if self.packed is not None:
            fill_ue8m0(out.scales, self.shifted, self.packed_bytes)
        if stats is not None:
            stats.add_(self.recv_count)
        self.phase = RECEIVED

    def recv_x(self):
        """bf16 [L, R*M, H]; or (fp8 [L, R*M, H], fp32 scales [L, R*M, H/128]), ue8m0 scales packed
        int32 [L, R*M, ceil(H/512)]. The endpoint's tensors (the same every step, filled by the
        dispatch's receive half): valid until the config's next dispatch."""
        if self.scales is None:
            return self.x
        return (self.x, self.packed if self.packed is not None else self.scales)

    def handle(self, hidden: int, experts: int) -> LowLatencyHandle:
        return LowLatencyHandle(self.src_info, self.layout_range, self.config.max_tokens_per_rank, hidden, experts,
                                state=self, step=self.step)

    # -- combine --------------------------------------------------------------------------------
    def combine_send(self, x, step: int) -> None:
        """The send half (the receive comes with the hook: combine_recv)."""
        self.ep.combine_send(self._begin_combine(x, step))
        self.phase = COMBINE_SENT

    def combine(self, x, step: int, topk_idx, topk_weights, out):
        """Both halves in one call (one kernel launch: the one "combine" kernel a profiler sees)."""
        rows = self._begin_combine(x, step)
        idx = self.combine_idx[: int(topk_idx.shape[0])]
        idx.copy_(topk_idx)
        y = self.ep.combine(rows, idx, out=out, topk_weights=topk_weights)
        self.phase = IDLE
        return y

    def _begin_combine(self, x, step: int):
        """Checks a combine's arguments and the config's step order; returns x as [rows, hidden]."""
        call = "Buffer.low_latency_combine"
        if step != self.step:
            raise out_of_order(call, f"the handle is of dispatch {step} of its config, whose latest is {self.step}: "
                                     "combine a dispatch before the config's next one")
        if self.phase == IDLE:
            self._repeat_dispatch()
        elif self.phase != RECEIVED:
            raise out_of_order(call, f"the config's last step is at '{self.phase}': call the hook that call returned first")
        import torch

        if x.dtype != torch.bfloat16 or tuple(x.shape) != self.shape or not x.is_contiguous():
            raise invalid(call, f"x is {x.dtype} {tuple(x.shape)}{'' if x.is_contiguous() else ' (not contiguous)'}, "
                                f"expected a contiguous torch.bfloat16 {self.shape} [local experts, ranks * max tokens, hidden]")
        return x.view(self.shape[0] * self.shape[1], self.shape[2])

    def combine_recv(self, topk_idx, topk_weights, out):
        if self.phase != COMBINE_SENT:
            raise out_of_order("Buffer.low_latency_combine hook", f"called at '{self.phase}': a hook runs once, after its combine")
        idx = self.combine_idx[: int(topk_idx.shape[0])]
        idx.copy_(topk_idx)
        y = self.ep.combine_recv(idx, topk_weights, out=out)
        self.phase = IDLE
        return y

    # -- keeping the endpoint's step order ------------------------------------------------------
    def _finish_uncombined(self) -> None:
        """Combines the received, never combined step of this config and drops the result."""
        import torch

        c, T = self.config, self.last_tokens
        if self._zero_weights is None:
            dev = self.idx.device
            self._zero_weights = torch.zeros((c.max_tokens_per_rank, c.top_k), dtype=torch.float32, device=dev)
            self._scratch_y = torch.empty((c.max_tokens_per_rank, c.hidden), dtype=torch.bfloat16, device=dev)
        rows = self.shape[0] * self.shape[1]
        src = self.x if c.dispatch_dtype == "bf16" else self.combine_buffer()
        self.ep.combine_send(src.view(rows, c.hidden))
        self.ep.combine_recv(self.idx[:T], self._zero_weights[:T], out=self._scratch_y[:T])
        self.phase = IDLE

    def _repeat_dispatch(self) -> None:
        """Dispatches the latest input of this config again, so that it can be combined again."""
        self.ep.dispatch_send(self.last_x, self.idx[: self.last_tokens], None)
        self.ep.dispatch_recv()
        self.phase = RECEIVED
