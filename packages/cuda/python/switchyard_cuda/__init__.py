"""Switchyard for PyTorch: expert-parallel dispatch and combine over libswitchyard_cuda's C ABI.

    from switchyard_cuda import Config, Endpoint, Runtime, compute_layout
    config = Config(ranks=4, experts=256, top_k=8, hidden=7168, max_tokens_per_rank=128)
    print(compute_layout(config).describe())                    # memory per rank, no GPU needed
    rt = Runtime.from_torch_distributed(symmetric_bytes=compute_layout(config).symmetric_bytes)
    ep = Endpoint(rt, config)
    out = ep.dispatch(x, topk_idx, topk_weights)                               # torch's current stream
    y = ep.combine(expert_out, topk_idx)

`pip install` builds libswitchyard_cuda into this package; $SWITCHYARD_CUDA_LIB overrides it.
`library_path()` says which file was loaded; `__version__` is the project's version.
"""

from ._abi import library_path
from ._version import read_version
from .endpoint import DispatchOutput, Endpoint
from .errors import (
    ConfigError,
    CudaError,
    InternalError,
    InvalidArgumentError,
    LibraryNotFoundError,
    NcclError,
    NvshmemError,
    PhaseError,
    ProtocolError,
    StateError,
    SwitchyardError,
    SyError,
    SyTimeoutError,
    UnsupportedError,
    error_for,
)
from .layout import Config, Layout, Region, compute_layout
from .runtime import Runtime, heap_size_for

__version__ = read_version()

__all__ = [
    "Config", "ConfigError", "CudaError", "DispatchOutput", "Endpoint", "InternalError", "InvalidArgumentError",
    "Layout", "LibraryNotFoundError", "NcclError", "NvshmemError", "PhaseError", "ProtocolError", "Region",
    "Runtime", "StateError", "SwitchyardError", "SyError", "SyTimeoutError", "UnsupportedError",
    "compute_layout", "error_for", "heap_size_for", "library_path",
]
