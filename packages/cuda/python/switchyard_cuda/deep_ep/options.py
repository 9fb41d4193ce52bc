"""What DeepEP's low-latency options mean here: the dispatch dtype and fp8 scale format of
use_fp8 / round_scale / use_ue8m0, the Buffer options accepted, and the named errors for those
that cannot be offered. Pure Python: no torch, no library."""

from __future__ import annotations

from .._contract import STATUS_INVALID_ARGUMENT, STATUS_PHASE, STATUS_UNSUPPORTED
from ..errors import error_for

# Every dispatch / combine of this module: the masked layout, weights applied at the home rank
# (they come with combine, none with dispatch).
COMBINE_WEIGHTS = "home"


def unsupported(call: str, message: str):
    """UnsupportedError from deep_ep.<call>: an option of DeepEP's API this module does not offer."""
    return error_for(STATUS_UNSUPPORTED, f"deep_ep.{call}", message)


def invalid(call: str, message: str):
    """InvalidArgumentError from deep_ep.<call>: an argument that is wrong whatever the backend."""
    return error_for(STATUS_INVALID_ARGUMENT, f"deep_ep.{call}", message)


def out_of_order(call: str, message: str):
    """PhaseError from deep_ep.<call>: a call the config's step in flight does not allow."""
    return error_for(STATUS_PHASE, f"deep_ep.{call}", message)


def dispatch_formats(use_fp8: bool, round_scale: bool, use_ue8m0: bool) -> tuple:
    """(dispatch_dtype, scale_format) of the Switchyard config for DeepEP's cast options:
    bf16 without use_fp8 (round_scale and use_ue8m0 have no scales to shape then); with use_fp8,
    fp32 amax / 448 scales ("amax"), power-of-two scales with round_scale ("pow2"), and their
    UE8M0 exponents with use_ue8m0 as well ("ue8m0", packed four per int32 on the way out)."""
    if not use_fp8:
        return "bf16", "pow2"
    if use_ue8m0 and not round_scale:
        raise invalid(
            "Buffer.low_latency_dispatch",
            "use_ue8m0=True needs round_scale=True (UE8M0 scales are powers of two): pass both, or neither",
        )
    if use_ue8m0:
        return "fp8-e4m3", "ue8m0"
    return "fp8-e4m3", "pow2" if round_scale else "amax"


def check_buffer_options(
    *,
    low_latency_mode: bool,
    allow_nvlink_for_low_latency_mode: bool,
    allow_mnnvl: bool,
    enable_shrink: bool,
    comm,
) -> None:
    """Refuses, naming the option, what Buffer cannot offer: the normal (high-throughput) mode,
    low-latency traffic kept off NVLink, multi-node NVLink, shrink mode (masking failed ranks) and
    an MPI communicator instead of a torch.distributed group."""
    call = "Buffer"
    if not low_latency_mode:
        raise unsupported(
            call,
            "low_latency_mode=False: only DeepEP's low-latency API is offered (low_latency_dispatch / "
            "low_latency_combine); pass low_latency_mode=True, or use switchyard_cuda.Endpoint with "
            'layout="contiguous" for the high-throughput path',
        )
    if not allow_nvlink_for_low_latency_mode:
        raise unsupported(
            call,
            "allow_nvlink_for_low_latency_mode=False: peers that NVSHMEM maps are always written over "
            "NVLink here; pass True",
        )
    if allow_mnnvl:
        raise unsupported(call, "allow_mnnvl=True: multi-node NVLink is not offered; pass False")
    if enable_shrink:
        raise unsupported(
            call, "enable_shrink=True: masking failed ranks is not offered (a rank that never arrives is a "
            "timeout error naming it); pass False",
        )
    if comm is not None:
        raise unsupported(call, "comm: an MPI communicator is not offered; pass a torch.distributed group")
