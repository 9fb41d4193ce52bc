"""The C ABI of libswitchyard_cuda (include/switchyard_cuda.h, switchyard_layout.h) in ctypes.

Structs mirror the headers field for field (tests/test_abi_header.py compiles a probe against the
headers and compares every struct, enum, constant and signature); every versioned struct starts with
struct_size, set here to ctypes.sizeof of the mirror. Structs the library fills without a size
(sy_runtime_info, sy_error_info) go through `filled`, which refuses a write past the mirror.
Loading collects every failure into one message.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

from ._contract import REGION_NAMES, STATUS_INTERNAL

SY_UNIQUE_ID_BYTES = 128
SY_REGION_COUNT = len(REGION_NAMES)
SY_LAYOUT_MAX_DIMS = 4
SY_LAYOUT_MAX_PARAMS = 64
SY_LAYOUT_ERROR_BYTES = 256
SY_ABI_VERSION = 1

c_size_t = ctypes.c_size_t
c_i32 = ctypes.c_int32
c_i64 = ctypes.c_int64
c_u32 = ctypes.c_uint32
c_u64 = ctypes.c_uint64


class SyConfig(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("ranks", c_i64),
        ("dp_size", c_i64),
        ("experts", c_i64),
        ("top_k", c_i64),
        ("hidden", c_i64),
        ("max_tokens_per_rank", c_i64),
        ("expert_alignment", c_i64),
        ("input_dtype", c_i32),
        ("dispatch_dtype", c_i32),
        ("layout", c_i32),
        ("scale_format", c_i32),
        ("combine_weights", c_i32),
    ]


class SyRegion(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("offset", c_u64),
        ("bytes", c_u64),
        ("align", c_u32),
        ("dtype", c_i32),
        ("symmetric", c_i32),
        ("shape_dims", c_i32),
        ("axis_count", c_i32),
        ("shape", c_u64 * SY_LAYOUT_MAX_DIMS),
        ("axes", ctypes.c_char_p * SY_LAYOUT_MAX_DIMS),
    ]


class SyLayout(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("rows", c_u64),
        ("rows_per_source", c_u64),
        ("slots_per_rank", c_u64),
        ("route_words", c_u64),
        ("symmetric_bytes", c_u64),
        ("local_bytes", c_u64),
        ("bytes_per_rank", c_u64),
        ("regions", SyRegion * SY_REGION_COUNT),
        ("placement", c_i32 * SY_REGION_COUNT),
        ("param_count", c_size_t),
        ("params", c_u64 * SY_LAYOUT_MAX_PARAMS),
        ("error_field", ctypes.c_char_p),
        ("error", ctypes.c_char * SY_LAYOUT_ERROR_BYTES),
    ]


class SyErrorInfo(ctypes.Structure):
    _fields_ = [(n, c_u32) for n in ("code", "stage", "peer", "region", "detail0", "detail1")]


class SyRuntimeOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("transport", c_i32),
        ("pointer_checks", c_i32),
        ("contiguous_blocks", c_i32),
        ("reserved", c_i32),
        ("kernel_per_half", c_i32),
    ]


class SyRuntimeInfo(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_int)
        for n in ("rank", "ranks", "device", "node_ranks", "sm_count", "direct_peers", "gpu_share")
    ]


P = ctypes.c_void_p
PP = ctypes.POINTER(ctypes.c_void_p)
_INT = ctypes.c_int

# name: (restype, argtypes). Functions of the layout come first: a layout-only library has them alone.
LAYOUT_FUNCTIONS = {
    "sy_config_init": (None, [ctypes.POINTER(SyConfig)]),
    "sy_layout_compute": (_INT, [ctypes.POINTER(SyConfig), ctypes.POINTER(SyLayout)]),
    "sy_layout_param_name": (ctypes.c_char_p, [c_size_t]),
    "sy_layout_param_count": (c_size_t, []),
    "sy_layout_describe": (c_size_t, [ctypes.POINTER(SyLayout), ctypes.c_char_p, c_size_t]),
}
CUDA_FUNCTIONS = {
    "sy_abi_version": (_INT, []),
    "sy_version": (ctypes.c_char_p, []),
    "sy_param_names": (ctypes.c_char_p, []),
    "sy_status_name": (ctypes.c_char_p, [_INT]),
    "sy_last_error": (ctypes.c_char_p, [P]),
    "sy_runtime_options_init": (None, [ctypes.POINTER(SyRuntimeOptions)]),
    "sy_get_unique_id": (_INT, [ctypes.c_char_p]),
    "sy_runtime_create_with_options": (
        _INT,
        [ctypes.c_char_p, _INT, _INT, _INT, ctypes.POINTER(SyRuntimeOptions), PP],
    ),
    "sy_runtime_info_get": (_INT, [P, ctypes.POINTER(SyRuntimeInfo)]),
    "sy_runtime_destroy": (_INT, [P]),
    "sy_barrier": (_INT, [P, P]),
    "sy_endpoint_create": (_INT, [P, ctypes.POINTER(c_u64), c_size_t, c_u64, c_u64, PP]),
    "sy_endpoint_destroy": (_INT, [P]),
    "sy_endpoint_region": (_INT, [P, _INT, PP, ctypes.POINTER(c_u64)]),
    "sy_endpoint_counts": (_INT, [P, PP]),
    "sy_endpoint_memory": (_INT, [P, ctypes.POINTER(c_u64), ctypes.POINTER(c_u64)]),
    "sy_dispatch_send": (_INT, [P, P, P, P, P, _INT, P]),
    "sy_dispatch_recv": (_INT, [P, P]),
    "sy_combine_send": (_INT, [P, P, P]),
    "sy_combine_recv": (_INT, [P, P, P, _INT, P, P]),
    "sy_dispatch": (_INT, [P, P, P, P, P, _INT, P]),
    "sy_combine": (_INT, [P, P, P, P, _INT, P, P]),
    "sy_endpoint_check": (_INT, [P, P, ctypes.POINTER(SyErrorInfo)]),
}


GUARD_BYTES = 64
_GUARD = 0xA5


def filled(struct_type, call: str, fill):
    """(status, struct) of `fill(pointer)`, which hands the pointer to the library function `call`.

    The struct sits zeroed in a buffer followed by GUARD_BYTES of a pattern; a library whose C
    struct is larger than this mirror (a field added on one side only) disturbs the pattern, and
    that is an InternalError naming the sizes instead of a silent overwrite of Python's memory.
    """
    from .errors import error_for

    size = ctypes.sizeof(struct_type)
    buf = (ctypes.c_ubyte * (size + GUARD_BYTES))()
    ctypes.memset(ctypes.addressof(buf) + size, _GUARD, GUARD_BYTES)
    status = fill(ctypes.cast(buf, ctypes.POINTER(struct_type)))
    past = [i for i in range(GUARD_BYTES) if buf[size + i] != _GUARD]
    if past:
        raise error_for(
            STATUS_INTERNAL,
            call,
            f"the library wrote at least {size + past[-1] + 1} bytes into a {size}-byte {struct_type.__name__}: "
            "this package's mirror of the C struct is out of date (install the package of the library's version)",
        )
    return status, struct_type.from_buffer_copy(buf)


def load(kind: str, path: str | None = None) -> ctypes.CDLL:
    """Loads libswitchyard_cuda (kind "cuda") or, for the layout alone, either library (kind "layout").

    Looks at `path`, else where _loader.candidates says ($SWITCHYARD_CUDA_LIB / $SWITCHYARD_LAYOUT_LIB,
    the library pip installed into the package, packages/cuda/build, the system's search path).
    Raises LibraryNotFoundError listing every try and what to do.
    """
    from . import _loader
    from .errors import LibraryNotFoundError

    tries = [path] if path else _loader.candidates(kind)
    failures = []
    for candidate in tries:
        try:
            if _loader.is_shipped(candidate) and Path(candidate).is_file() and _built_with_nvshmem_wheel():
                _loader.preload_nvshmem()
            lib = ctypes.CDLL(candidate)
        except OSError as e:
            failures.append(f"{candidate}: {e}")
            continue
        _declare(lib, LAYOUT_FUNCTIONS)
        if kind == "cuda":
            if not hasattr(lib, "sy_abi_version"):
                failures.append(f"{candidate}: no sy_abi_version (the layout-only library?)")
                continue
            _declare(lib, CUDA_FUNCTIONS)
            if lib.sy_abi_version() != SY_ABI_VERSION:
                failures.append(f"{candidate}: ABI version {lib.sy_abi_version()}, this package speaks {SY_ABI_VERSION}")
                continue
        return lib
    raise LibraryNotFoundError(
        f"libswitchyard_{kind} could not be loaded:\n  " + "\n  ".join(failures) + f"\nfix: {_loader.FIX}"
    )


def library_path(lib: ctypes.CDLL | None = None) -> str:
    """The library `lib` (default: the one load("cuda") finds) as it was opened: a path, or a bare
    name the system loader resolved."""
    return (lib or load("cuda"))._name


def _built_with_nvshmem_wheel() -> bool:
    try:
        from ._build_config import NVSHMEM_SOURCE
    except ImportError:
        return False
    return NVSHMEM_SOURCE == "wheel"


def _declare(lib: ctypes.CDLL, table: dict) -> None:
    for name, (restype, argtypes) in table.items():
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        fn.restype = restype
        fn.argtypes = argtypes
