"""One rank's endpoint for one config: dispatch and combine on torch tensors and CUDA streams.

Every phase only enqueues work on the stream (torch's current one unless given), so a step can
be captured into a CUDA graph (torch.cuda.graph) and replayed. Errors a receive stage records
(a rank that never arrived, a broken signal) surface at `check()` as SyTimeoutError / ProtocolError
naming the rank, the peer and the stage, or InvalidArgumentError naming the token, slot and expert
of a bad topk_idx entry a send kernel refused.
"""

from __future__ import annotations

import ctypes
from typing import NamedTuple

from . import _abi
from ._contract import REGION_NAMES
from ._tensor import device_tensor, stream_handle_on
from .errors import InvalidArgumentError, SwitchyardError, error_for
from .layout import Config, compute_layout
from .runtime import Runtime

REGION_INDEX = {name: i for i, name in enumerate(REGION_NAMES)}


class DispatchOutput(NamedTuple):
    """What the experts get: views of the endpoint's buffers (the same tensors every step, made
    when the endpoint was), their contents valid until the next dispatch.

    x: recvX (masked [L, R*M, H], expert e's rows at the front of its block; contiguous [N, H],
    expert blocks padded to expertAlignment, a padding row's x and scales unspecified), scales:
    recvScales (fp8) or None, meta: recvMeta (srcRank, srcToken, topkSlot, localExpert) per row
    (srcRank -1 on padding rows), counts: [L, R] int32 rows per (local
    expert, source rank), on the device."""

    x: object
    scales: object
    meta: object
    counts: object


class _Types(NamedTuple):
    """The torch dtypes a config's phases check against."""

    input: object
    input_fp8: bool
    i32: object
    f32: object
    bf16: object

    @staticmethod
    def of(config: Config) -> "_Types":
        import torch

        fp8 = getattr(torch, "float8_e4m3fn", None)
        input_fp8 = config.input_dtype == "fp8-e4m3"
        return _Types(fp8 if input_fp8 else torch.bfloat16, input_fp8, torch.int32, torch.float32, torch.bfloat16)


class Endpoint:
    """Collective to create and destroy (every rank of the runtime, same config)."""

    def __init__(self, runtime: Runtime, config: Config, *, timeout_ms: int = 10_000):
        self.runtime, self.config, self.lib = runtime, config, runtime.lib
        self.layout = compute_layout(config, self.lib)
        theirs = self.lib.sy_param_names().decode().split(",")
        if list(self.layout.param_names) != theirs:
            raise SwitchyardError(
                "Endpoint: the library's kernels read another parameter block than its layout function "
                f"writes (kernels: {len(theirs)} parameters, layout: {len(self.layout.param_names)}); "
                "the library was built from a mixed protocol version: rebuild it"
            )
        params = (_abi.c_u64 * len(self.layout.params))(*self.layout.params)
        handle = ctypes.c_void_p()
        st = self.lib.sy_endpoint_create(
            runtime.handle(), params, len(params), self.layout.symmetric_bytes, int(timeout_ms) * 1_000_000,
            ctypes.byref(handle),
        )
        runtime.check(st, "sy_endpoint_create")
        self._handle = handle
        # Made once, for the phases' sake (they run every step; bench/host-overhead measures them):
        # the torch dtypes, the library's functions, the stream lookup, and the output tensors (the
        # regions never move while the endpoint lives; a tensor over foreign memory costs more host
        # time than a phase's whole call).
        self._types = _Types.of(config)
        self._rows_shape = (self.layout.rows, config.hidden)
        self._send, self._recv = self.lib.sy_dispatch_send, self.lib.sy_dispatch_recv
        self._csend, self._crecv = self.lib.sy_combine_send, self.lib.sy_combine_recv
        self._both, self._cboth = self.lib.sy_dispatch, self.lib.sy_combine
        self._stream = stream_handle_on(runtime.device)
        scales = self.region("recvScales") if self.layout.regions["recvScales"].bytes else None
        self._output = DispatchOutput(self.region("recvX"), scales, self.region("recvMeta"), self.counts())

    # -- plumbing -------------------------------------------------------------------------------
    def _h(self):
        if self._handle is None:
            raise error_for(7, "Endpoint", "the endpoint was destroyed", rank=self.runtime.rank)
        return self._handle

    def _check(self, status: int, call: str, info=None) -> None:
        if status != 0:
            msg = self.lib.sy_last_error(self._handle).decode()
            raise error_for(status, call, msg, rank=self.runtime.rank, info=info, experts=self.config.experts)

    def region(self, name: str):
        """A region of this rank's buffers as a torch tensor of the layout's shape (no copy)."""
        r = self.layout.regions[name]
        ptr, size = ctypes.c_void_p(), _abi.c_u64()
        self._check(self.lib.sy_endpoint_region(self._h(), REGION_INDEX[name], ctypes.byref(ptr), ctypes.byref(size)),
                    "sy_endpoint_region")
        shape = r.shape if size.value else (0,)
        return device_tensor(ptr.value, shape, r.dtype, self.runtime.device, self)

    def counts(self):
        """[L, R] int32 on the device: rows of each (local expert, source rank), written by dispatch recv."""
        ptr = ctypes.c_void_p()
        self._check(self.lib.sy_endpoint_counts(self._h(), ctypes.byref(ptr)), "sy_endpoint_counts")
        return device_tensor(ptr.value, (self.config.local_experts, self.config.ranks), "i32", self.runtime.device, self)

    def _ptr(self, t, what: str, dtype, shape) -> int:
        """t's device address once it is a contiguous CUDA tensor of `dtype` and `shape`; else the
        named error. The common case costs a handful of attribute reads: this runs on every phase."""
        try:
            if t.dtype is dtype and t.shape == shape and t.is_cuda and t.is_contiguous():
                return t.data_ptr()
        except AttributeError:
            pass
        import torch

        if not isinstance(t, torch.Tensor) or not t.is_cuda or not t.is_contiguous():
            raise InvalidArgumentError(1, what, "must be a contiguous CUDA tensor", rank=self.runtime.rank)
        raise InvalidArgumentError(
            1, what, f"is {t.dtype} {tuple(t.shape)}, expected {dtype} {tuple(shape)}", rank=self.runtime.rank)

    # -- the four phases ------------------------------------------------------------------------
    # Each checks its tensors, then one ctypes call enqueues the phase on `stream` (default: torch's
    # current stream on the endpoint's device). Nothing is imported or allocated on this path.
    def dispatch_send(self, x, topk_idx, topk_weights=None, scales=None, stream=None) -> None:
        """Sends this rank's tokens: x [T, hidden], topk_idx [T, topK] int32, topk_weights [T, topK]
        fp32 (carried to the expert ranks, which sum each token's slots there: protocol version 2),
        or None with combine_weights "home" (the weights come with combine_recv then)."""
        st = self._send(self._h(), *self._send_args(x, topk_idx, topk_weights, scales, "dispatch_send"),
                        self._stream(stream))
        if st:
            self._check(st, "sy_dispatch_send")

    def _send_args(self, x, topk_idx, topk_weights, scales, call: str):
        """Dispatch send's checked addresses: x, scales, topk_idx, topk_weights, T."""
        c, T = self.config, int(x.shape[0])
        if T > c.max_tokens_per_rank:
            raise InvalidArgumentError(1, call, f"{T} tokens > maxTokensPerRank {c.max_tokens_per_rank}",
                                       rank=self.runtime.rank)
        t = self._types
        xp = self._ptr(x, f"{call}: x", t.input, (T, c.hidden))
        ip = self._ptr(topk_idx, f"{call}: topk_idx", t.i32, (T, c.top_k))
        wp = self._weights(topk_weights, call, T, at_home=False)
        sp = None
        if t.input_fp8:
            sp = self._ptr(scales, f"{call}: scales", t.f32, (T, c.hidden // 128))
        return xp, sp, ip, wp, T

    def _weights(self, w, call: str, T: int, at_home: bool):
        """topk_weights' address where this phase takes them (dispatch_send with combine_weights
        "expert", combine_recv with "home"), else None; the named error for weights given to the
        other phase or missing from this one."""
        home = self.config.combine_weights == "home"
        if home == at_home:
            if w is None:
                raise InvalidArgumentError(
                    1, f"{call}: topk_weights", f'is required with combine_weights "{self.config.combine_weights}": '
                    "pass the router weights [T, topK] fp32", rank=self.runtime.rank)
            return self._ptr(w, f"{call}: topk_weights", self._types.f32, (T, self.config.top_k))
        if w is not None:
            where = "combine_recv" if home else "dispatch_send"
            raise InvalidArgumentError(
                1, f"{call}: topk_weights", f'must be None with combine_weights "{self.config.combine_weights}": '
                f"the weights go to {where}" + ("" if home else " (pass out= and stream= by keyword)"),
                rank=self.runtime.rank)
        return None

    def dispatch_recv(self, stream=None) -> DispatchOutput:
        st = self._recv(self._h(), self._stream(stream))
        if st:
            self._check(st, "sy_dispatch_recv")
        return self._output

    def combine_send(self, expert_out, stream=None) -> None:
        p = self._ptr(expert_out, "combine_send: expert_out", self._types.bf16, self._rows_shape)
        st = self._csend(self._h(), p, self._stream(stream))
        if st:
            self._check(st, "sy_combine_send")

    def combine_recv(self, topk_idx, topk_weights=None, out=None, stream=None):
        """Sums the partials of this rank's tokens: y [T, hidden] bf16. topk_weights [T, topK] fp32
        with combine_weights "home" (required there); None with "expert" (the weights travelled with
        dispatch)."""
        ip, wp, T, yp, out = self._recv_args(topk_idx, topk_weights, out, "combine_recv")
        st = self._crecv(self._h(), ip, wp, T, yp, self._stream(stream))
        if st:
            self._check(st, "sy_combine_recv")
        return out

    def _recv_args(self, topk_idx, topk_weights, out, call: str):
        """Combine recv's checked addresses (topk_idx, topk_weights, T, y) and y itself (made when None)."""
        c, T, t = self.config, int(topk_idx.shape[0]), self._types
        wp = self._weights(topk_weights, call, T, at_home=True)
        if out is None:
            import torch

            out = torch.empty((T, c.hidden), dtype=t.bf16, device=topk_idx.device)
        ip = self._ptr(topk_idx, f"{call}: topk_idx", t.i32, (T, c.top_k))
        yp = self._ptr(out, f"{call}: out", t.bf16, (T, c.hidden))
        return ip, wp, T, yp, out

    def dispatch(self, x, topk_idx, topk_weights=None, scales=None, stream=None) -> DispatchOutput:
        """Both halves of dispatch in one call (sy_dispatch): the masked layout launches one kernel
        for them, the contiguous one its two."""
        st = self._both(self._h(), *self._send_args(x, topk_idx, topk_weights, scales, "dispatch"), self._stream(stream))
        if st:
            self._check(st, "sy_dispatch")
        return self._output

    def combine(self, expert_out, topk_idx, out=None, stream=None, *, topk_weights=None):
        """Both halves of combine in one call (sy_combine; one kernel launch in either layout): y
        [T, hidden] bf16 (topk_weights: combine_recv's)."""
        p = self._ptr(expert_out, "combine: expert_out", self._types.bf16, self._rows_shape)
        ip, wp, T, yp, out = self._recv_args(topk_idx, topk_weights, out, "combine")
        st = self._cboth(self._h(), p, ip, wp, T, yp, self._stream(stream))
        if st:
            self._check(st, "sy_combine")
        return out

    def check(self, stream=None) -> None:
        """Synchronises the stream; raises what a stage kernel recorded (SyTimeoutError naming the
        peer that never arrived and the stage, ProtocolError, InvalidArgumentError for a bad
        topk_idx entry, ...)."""
        h, s = self._h(), self._stream(stream)
        st, info = _abi.filled(_abi.SyErrorInfo, "sy_endpoint_check", lambda p: self.lib.sy_endpoint_check(h, s, p))
        self._check(st, "sy_endpoint_check", info)

    def memory(self) -> dict:
        """Device bytes this endpoint allocated, of them its local output buffers, and the layout's report."""
        dev, local = _abi.c_u64(), _abi.c_u64()
        self._check(self.lib.sy_endpoint_memory(self._h(), ctypes.byref(dev), ctypes.byref(local)),
                    "sy_endpoint_memory")
        return {"device_bytes": dev.value, "local_bytes": local.value, "layout": self.layout.describe()}

    def destroy(self) -> None:
        """Collective. Later calls raise StateError."""
        if self._handle is None:
            return
        st = self.lib.sy_endpoint_destroy(self._handle)
        self._handle, handle, self._output = None, self._handle, None
        if st != 0:
            raise error_for(st, "sy_endpoint_destroy", self.lib.sy_last_error(None).decode(), rank=self.runtime.rank)
        del handle
