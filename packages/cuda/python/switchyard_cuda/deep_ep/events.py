"""EventOverlap (a CUDA event the caller's stream can wait for) and DeepEP's normal-mode Config,
kept so code that builds one still imports."""

from __future__ import annotations

from .options import out_of_order, unsupported


class EventOverlap:
    """A torch.cuda.Event recorded after a call (or None where the call was not asked for one).

    `current_stream_wait()` makes torch's current stream wait for it; as a context manager the wait
    happens on leaving the block. Every call of this module enqueues its work on the caller's
    current stream, so the event is already ordered before anything later on that stream; it
    matters to work on other streams. `extra_tensors` is kept (not used) for callers that pass it."""

    def __init__(self, event=None, extra_tensors=None) -> None:
        self.event = event
        self.extra_tensors = extra_tensors

    @classmethod
    def record(cls) -> "EventOverlap":
        """An event recorded now on torch's current stream."""
        import torch

        event = torch.cuda.Event()
        event.record()
        return cls(event)

    def current_stream_wait(self) -> None:
        if self.event is None:
            raise out_of_order(
                "EventOverlap.current_stream_wait",
                "this call recorded no event: pass async_finish=True to get one (without it the call's "
                "work is already ordered on the current stream)",
            )
        import torch

        torch.cuda.current_stream().wait_event(self.event)

    def __enter__(self) -> "EventOverlap":
        return self

    def __exit__(self, *exc) -> None:
        if self.event is not None:
            self.current_stream_wait()


class Config:
    """DeepEP's tuning config of the normal (high-throughput) kernels: SMs and chunk sizes. Kept so
    code that makes one imports; the low-latency calls take none, and its buffer-size hints raise."""

    def __init__(self, num_sms: int = 20, num_max_nvl_chunked_send_tokens: int = 6,
                 num_max_nvl_chunked_recv_tokens: int = 256, num_max_rdma_chunked_send_tokens: int = 6,
                 num_max_rdma_chunked_recv_tokens: int = 256) -> None:
        self.num_sms = num_sms
        self.num_max_nvl_chunked_send_tokens = num_max_nvl_chunked_send_tokens
        self.num_max_nvl_chunked_recv_tokens = num_max_nvl_chunked_recv_tokens
        self.num_max_rdma_chunked_send_tokens = num_max_rdma_chunked_send_tokens
        self.num_max_rdma_chunked_recv_tokens = num_max_rdma_chunked_recv_tokens

    def get_nvl_buffer_size_hint(self, hidden_bytes: int, num_ranks: int) -> int:
        raise unsupported("Config.get_nvl_buffer_size_hint", _NORMAL_MODE)

    def get_rdma_buffer_size_hint(self, hidden_bytes: int, num_ranks: int) -> int:
        raise unsupported("Config.get_rdma_buffer_size_hint", _NORMAL_MODE)


_NORMAL_MODE = (
    "the normal (high-throughput) mode is not offered, so it has no buffer to size; use the low-latency "
    'API, or switchyard_cuda.Endpoint with layout="contiguous"'
)
