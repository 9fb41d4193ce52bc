"""DeepEP's low-latency Python API over Switchyard: `Buffer` (low_latency_dispatch /
low_latency_combine and their helpers), `EventOverlap`, `Config` and `topk_idx_t` (torch.int64).
What cannot be offered (the normal mode, LogFMT, shrink mode, internode options) raises
UnsupportedError naming the option. The package deep_ep_shim/ next to switchyard_cuda makes
`import deep_ep` resolve here (README: "Drop-in for DeepEP's low-latency API")."""

from .buffer import Buffer
from .events import Config, EventOverlap

__all__ = ["Buffer", "Config", "EventOverlap", "topk_idx_t"]


def __getattr__(name: str):
    # torch is imported lazily by the whole package: topk_idx_t is torch's int64 on first use.
    if name == "topk_idx_t":
        import torch

        return torch.int64
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
