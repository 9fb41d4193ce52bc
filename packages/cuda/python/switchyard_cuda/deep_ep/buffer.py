"""Buffer: DeepEP's low-latency Buffer API over Switchyard's masked layout."""

from __future__ import annotations

from .endpoint_state import RECEIVED, EndpointState
from .events import EventOverlap
from .options import COMBINE_WEIGHTS, check_buffer_options, dispatch_formats, invalid, out_of_order, unsupported

_NORMAL = ('the normal (high-throughput) mode is not offered: use low_latency_dispatch / low_latency_combine, '
           'or switchyard_cuda.Endpoint with layout="contiguous"')
_SHRINK = "shrink mode (masking failed ranks) is not offered: a rank that never arrives is a timeout error naming it"
DEFAULT_TOPK_BOUND = 16  # top-k the size hint allows for when not told


class Buffer:
    """DeepEP's Buffer, low-latency mode, over Switchyard (collective to create: every rank of `group`).

    Arguments as DeepEP's. Used: `group` (None: the world), `num_rdma_bytes` (sizes NVSHMEM's heap,
    switchyard_cuda.heap_size_for, unless NVSHMEM_SYMMETRIC_SIZE is set; get_low_latency_rdma_size_hint
    gives it), `low_latency_mode` (must be True), `explicitly_destroy`. Accepted and without meaning
    here: `num_nvl_bytes`, `num_qps_per_rank` (no InfiniBand queue pairs: peers are written through
    NVSHMEM), `use_fabric`. Refused with UnsupportedError naming the option: low_latency_mode=False,
    allow_nvlink_for_low_latency_mode=False, allow_mnnvl=True, enable_shrink=True, comm.

    One Switchyard endpoint (masked layout, router weights applied at the home rank) is made per
    (num_max_dispatch_tokens_per_rank, hidden, num_experts, top-k, fp8 options) on its first
    dispatch, which is collective like every call here; later calls of that config allocate nothing
    and synchronise nothing, so they can be captured into a CUDA graph. Every call runs on torch's
    current stream. One step is in flight per config: its results stay valid until its next dispatch.
    Rows of a local expert are ordered by source rank, then the source's token order.
    Without explicitly_destroy, resources live until the process ends (destroying is collective,
    which a garbage collector cannot promise)."""

    num_sms: int = 20

    def __init__(self, group=None, num_nvl_bytes: int = 0, num_rdma_bytes: int = 0, low_latency_mode: bool = False,
                 num_qps_per_rank: int = 24, allow_nvlink_for_low_latency_mode: bool = True, allow_mnnvl: bool = False,
                 use_fabric: bool = False, explicitly_destroy: bool = False, enable_shrink: bool = False,
                 comm=None) -> None:
        check_buffer_options(low_latency_mode=low_latency_mode,
                             allow_nvlink_for_low_latency_mode=allow_nvlink_for_low_latency_mode,
                             allow_mnnvl=allow_mnnvl, enable_shrink=enable_shrink, comm=comm)
        import torch.distributed as dist

        from ..runtime import Runtime

        self.group = group
        self.rank, self.group_size = dist.get_rank(group), dist.get_world_size(group)
        self.num_nvl_bytes, self.num_rdma_bytes = num_nvl_bytes, num_rdma_bytes
        self.low_latency_mode, self.explicitly_destroy, self.enable_shrink = low_latency_mode, explicitly_destroy, False
        # One kernel function a half whichever calls run it (with or without the receive hook), as
        # DeepEP's users and its tests' profiler expect.
        self.runtime = Runtime.from_torch_distributed(group, symmetric_bytes=int(num_rdma_bytes), kernel_per_half=True)
        self._states: dict = {}  # config key -> EndpointState
        self._latest: dict = {}  # (M, hidden, experts) -> the EndpointState dispatched last
        self._combine_buffers: dict = {}  # (M, hidden, experts) -> bf16 [L, R*M, H]

    # -- sizes and settings ---------------------------------------------------------------------
    @staticmethod
    def get_low_latency_rdma_size_hint(num_max_dispatch_tokens_per_rank: int, hidden: int, num_ranks: int,
                                       num_experts: int, num_topk: int | None = None) -> int:
        """Symmetric bytes one endpoint of this shape needs in its largest form (bf16 dispatch,
        weights at home), for top-k `num_topk` (default min(num_experts, 16)): Switchyard's layout
        (compute_layout). Pass it as num_rdma_bytes; NVSHMEM's heap gets room for several."""
        from ..layout import Config, compute_layout

        k = num_topk if num_topk is not None else min(num_experts, DEFAULT_TOPK_BOUND)
        config = Config(ranks=num_ranks, experts=num_experts, top_k=k, hidden=hidden,
                        max_tokens_per_rank=num_max_dispatch_tokens_per_rank, combine_weights=COMBINE_WEIGHTS)
        return compute_layout(config).symmetric_bytes

    @staticmethod
    def set_num_sms(new_num_sms: int) -> None:
        """Kept for DeepEP's callers: the SMs of its normal-mode kernels, which are not offered here."""
        if new_num_sms % 2 != 0:
            raise invalid("Buffer.set_num_sms", f"new_num_sms = {new_num_sms}: must be even")
        Buffer.num_sms = new_num_sms

    @staticmethod
    def capture() -> EventOverlap:
        """An event recorded now on torch's current stream."""
        return EventOverlap.record()

    def get_comm_stream(self):
        """torch's current stream: every call here runs on it (there is no stream of its own)."""
        import torch

        return torch.cuda.current_stream()

    # -- low-latency dispatch and combine -------------------------------------------------------
    def low_latency_dispatch(self, x, topk_idx, num_max_dispatch_tokens_per_rank: int, num_experts: int,
                             cumulative_local_expert_recv_stats=None, dispatch_wait_recv_cost_stats=None,
                             use_fp8: bool = True, round_scale: bool = False, use_ue8m0: bool = False,
                             async_finish: bool = False, return_recv_hook: bool = False):
        """Sends x [T, hidden] bf16 to the ranks of the experts topk_idx [T, K] (int64 or int32,
        -1 = unused slot) names. Returns (recv_x, recv_count, handle, event, hook): recv_x bf16
        [L, R*M, hidden], or with use_fp8 (fp8 e4m3 [L, R*M, hidden], scales), scales fp32
        [L, R*M, hidden/128] (amax/448; powers of two with round_scale) or with use_ue8m0 int32
        [L, R*M, ceil(hidden/512)] (four UE8M0 bytes a word, row-major); recv_count int32 [L];
        handle for low_latency_combine; event recorded after the call with async_finish (else an
        EventOverlap without one); hook: with return_recv_hook the call enqueues only the send half
        and hook() the receive half, else a function that does nothing.
        dispatch_wait_recv_cost_stats is refused (UnsupportedError)."""
        call = "Buffer.low_latency_dispatch"
        if dispatch_wait_recv_cost_stats is not None:
            raise unsupported(call, "dispatch_wait_recv_cost_stats: per-rank wait times are not recorded; pass None")
        dtype, fmt = dispatch_formats(use_fp8, round_scale, use_ue8m0)
        _check_idx(topk_idx, call)
        hidden = int(x.shape[-1])
        state = self._state(num_max_dispatch_tokens_per_rank, hidden, num_experts, int(topk_idx.shape[1]), dtype, fmt)
        stats = cumulative_local_expert_recv_stats
        if stats is not None:
            _check_stats(stats, state.config.local_experts, call)
        if return_recv_hook:
            state.dispatch_send(x, topk_idx)

            def hook() -> None:
                state.dispatch_recv(stats)
        else:
            state.dispatch(x, topk_idx, stats)  # one kernel launch for both halves
            hook = _nothing
        self._latest[(num_max_dispatch_tokens_per_rank, hidden, num_experts)] = state
        handle = state.handle(hidden, num_experts)
        event = EventOverlap.record() if async_finish else EventOverlap()
        return state.recv_x(), state.recv_count, handle, event, hook

    def low_latency_combine(self, x, topk_idx, topk_weights, handle, use_logfmt: bool = False, zero_copy: bool = False,
                            async_finish: bool = False, return_recv_hook: bool = False, out=None,
                            combine_wait_recv_cost_stats=None):
        """Sends the expert outputs x bf16 [L, R*M, hidden] (row-aligned with the dispatch's recv_x;
        with zero_copy, get_next_low_latency_combine_buffer(handle) holds them instead) home, where
        y[t] = sum_k topk_weights[t, k] * row(t, k) over used slots, fp32, rounded once to bf16.
        topk_idx / topk_weights: [T, K] (int64 or int32; fp32) of the dispatch. Returns
        (combined_x [T, hidden] bf16 (into `out` if given), event, hook) as low_latency_dispatch.
        use_logfmt and combine_wait_recv_cost_stats are refused (UnsupportedError)."""
        call = "Buffer.low_latency_combine"
        if use_logfmt:
            raise unsupported(call, "use_logfmt=True: LogFMT-compressed combine is not offered; pass use_logfmt=False "
                                    "(combine moves bf16 rows)")
        if combine_wait_recv_cost_stats is not None:
            raise unsupported(call, "combine_wait_recv_cost_stats: per-rank wait times are not recorded; pass None")
        _check_idx(topk_idx, call)
        state, step = self._state_of(handle, call)
        src = self.get_next_low_latency_combine_buffer(handle) if zero_copy else x
        if return_recv_hook:
            import torch

            state.combine_send(src, step)

            if out is None:  # made now: the caller holds the result past the hook
                out = torch.empty((int(topk_idx.shape[0]), state.config.hidden), dtype=torch.bfloat16,
                                  device=topk_idx.device)

            def hook() -> None:
                state.combine_recv(topk_idx, topk_weights, out)
        else:
            out = state.combine(src, step, topk_idx, topk_weights, out)  # one kernel launch for both halves
            hook = _nothing
        event = EventOverlap.record() if async_finish else EventOverlap()
        return out, event, hook

    def get_next_low_latency_combine_buffer(self, handle):
        """bf16 [L, R*M, hidden] the caller may write the expert outputs into, then pass zero_copy=True
        to low_latency_combine (one per (max tokens, hidden, experts), made on first use)."""
        _, _, m, hidden, experts = handle
        key = (int(m), int(hidden), int(experts))
        buf = self._combine_buffers.get(key)
        if buf is None:
            import torch

            L = experts // self.group_size
            buf = torch.empty((L, self.group_size * m, hidden), dtype=torch.bfloat16,
                              device=torch.device("cuda", self.runtime.device))
            self._combine_buffers[key] = buf
        return buf

    def clean_low_latency_buffer(self, num_max_dispatch_tokens_per_rank: int, hidden: int, num_experts: int) -> None:
        """Collective. Nothing to zero here (every signal carries its step); completes a received,
        never combined step of these configs so the next dispatch starts clean."""
        for (m, h, e, *_), state in self._states.items():
            if (m, h, e) == (num_max_dispatch_tokens_per_rank, hidden, num_experts) and state.phase == RECEIVED:
                state._finish_uncombined()

    def destroy(self) -> None:
        """Collective: destroys every endpoint, then the runtime. Later calls raise StateError."""
        states, self._states, self._latest, self._combine_buffers = self._states, {}, {}, {}
        for state in states.values():
            state.ep.destroy()
        if self.runtime is not None:
            self.runtime.destroy()
            self.runtime = None

    # -- what is not offered --------------------------------------------------------------------
    def get_dispatch_layout(self, *args, **kwargs):
        raise unsupported("Buffer.get_dispatch_layout", _NORMAL)

    def dispatch(self, *args, **kwargs):
        raise unsupported("Buffer.dispatch", _NORMAL)

    def combine(self, *args, **kwargs):
        raise unsupported("Buffer.combine", _NORMAL)

    def internode_dispatch(self, *args, **kwargs):
        raise unsupported("Buffer.internode_dispatch", _NORMAL)

    def internode_combine(self, *args, **kwargs):
        raise unsupported("Buffer.internode_combine", _NORMAL)

    @staticmethod
    def get_dispatch_config(num_ranks: int):
        raise unsupported("Buffer.get_dispatch_config", _NORMAL)

    @staticmethod
    def get_combine_config(num_ranks: int):
        raise unsupported("Buffer.get_combine_config", _NORMAL)

    def low_latency_update_mask_buffer(self, *args, **kwargs):
        raise unsupported("Buffer.low_latency_update_mask_buffer", _SHRINK)

    def low_latency_query_mask_buffer(self, *args, **kwargs):
        raise unsupported("Buffer.low_latency_query_mask_buffer", _SHRINK)

    def low_latency_clean_mask_buffer(self, *args, **kwargs):
        raise unsupported("Buffer.low_latency_clean_mask_buffer", _SHRINK)

    # -- plumbing -------------------------------------------------------------------------------
    def _state(self, m: int, hidden: int, experts: int, top_k: int, dtype: str, fmt: str) -> EndpointState:
        key = (m, hidden, experts, top_k, dtype, fmt)
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = self._new_state(key)
        return state

    def _new_state(self, key) -> EndpointState:
        from ..endpoint import Endpoint
        from ..layout import Config

        if self.runtime is None:
            raise out_of_order("Buffer", "the buffer was destroyed")
        m, hidden, experts, top_k, dtype, fmt = key
        config = Config(ranks=self.group_size, experts=experts, top_k=top_k, hidden=hidden, max_tokens_per_rank=m,
                        dispatch_dtype=dtype, scale_format=fmt, combine_weights=COMBINE_WEIGHTS)
        return EndpointState(Endpoint(self.runtime, config), lambda: self.get_next_low_latency_combine_buffer(
            (None, None, m, hidden, experts)))

    def _state_of(self, handle, call: str):
        """The config state and dispatch step a handle belongs to (a plain 5-tuple: the latest
        dispatch of its (max tokens, hidden, experts))."""
        state = getattr(handle, "state", None)
        if state is not None:
            return state, handle.step
        try:
            _, _, m, hidden, experts = handle
        except (TypeError, ValueError):
            raise invalid(call, "handle must be the handle low_latency_dispatch returned") from None
        state = self._latest.get((m, hidden, experts))
        if state is None:
            raise out_of_order(call, f"no dispatch of (num_max_dispatch_tokens_per_rank={m}, hidden={hidden}, "
                                     f"num_experts={experts}) to combine: dispatch first")
        return state, state.step


def _nothing() -> None:
    pass


def _check_idx(topk_idx, call: str) -> None:
    import torch

    if not isinstance(topk_idx, torch.Tensor) or topk_idx.dim() != 2 or not topk_idx.is_cuda \
            or topk_idx.dtype not in (torch.int64, torch.int32):
        what = f"{topk_idx.dtype} {tuple(topk_idx.shape)}" if isinstance(topk_idx, torch.Tensor) else type(topk_idx).__name__
        raise invalid(call, f"topk_idx is {what}: expected a CUDA tensor [tokens, top-k] of torch.int64 "
                            "(deep_ep.topk_idx_t) or torch.int32")


def _check_stats(stats, local_experts: int, call: str) -> None:
    import torch

    if not isinstance(stats, torch.Tensor) or stats.dtype != torch.int32 or tuple(stats.shape) != (local_experts,) \
            or not stats.is_cuda:
        what = f"{stats.dtype} {tuple(stats.shape)}" if isinstance(stats, torch.Tensor) else type(stats).__name__
        raise invalid(call, f"cumulative_local_expert_recv_stats is {what}: expected a CUDA torch.int32 "
                            f"[{local_experts}] (one count per local expert)")
