"""Where libswitchyard_cuda is looked for, and what is loaded before it.

Order: $SWITCHYARD_CUDA_LIB (and $SWITCHYARD_LAYOUT_LIB for the layout alone), which override
everything; the library `pip install` put in this package's folder; packages/cuda/build of a source
checkout (`npm run build:native -w @switchyard/cuda`); the system loader's own search.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
CUDA_NAMES = ["libswitchyard_cuda.so.1", "libswitchyard_cuda.so"]
LAYOUT_NAMES = ["libswitchyard_layout.so"]
NVSHMEM_HOST = "libnvshmem_host.so.3"


def candidates(kind: str) -> list[str]:
    """Paths (or bare names, for the loader's search) to try, in order, for kind "cuda" or "layout"."""
    names = CUDA_NAMES + (LAYOUT_NAMES if kind == "layout" else [])
    # The full library carries the layout functions too, so SWITCHYARD_CUDA_LIB serves both kinds.
    env_vars = ["SWITCHYARD_LAYOUT_LIB", "SWITCHYARD_CUDA_LIB"] if kind == "layout" else ["SWITCHYARD_CUDA_LIB"]
    out = [os.environ[v] for v in env_vars if os.environ.get(v)]
    out += [str(HERE / n) for n in names]  # installed by pip into the package
    out += [str(HERE.parent.parent / "build" / n) for n in names]  # packages/cuda/build of a source checkout
    return out + names


def is_shipped(path: str) -> bool:
    """Whether `path` is a library pip installed into this package's folder."""
    return Path(path).parent == HERE


def wheel_nvshmem_host() -> Path | None:
    """libnvshmem_host.so.3 of the nvidia-nvshmem-cu13 wheel, where that wheel is installed."""
    try:
        spec = importlib.util.find_spec("nvidia.nvshmem")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        lib = Path(folder) / "lib" / NVSHMEM_HOST
        if lib.is_file():
            return lib
    return None


def preload_nvshmem() -> str | None:
    """Loads the wheel's libnvshmem_host.so.3 before the shipped library, which needs it.

    Why a preload rather than only the library's RPATH ($ORIGIN/../nvidia/nvshmem/lib, also set):
    the RPATH finds the wheel only when both packages sit in the same site-packages. A virtual
    environment made with --system-site-packages, a user install (pip --user) or a PYTHONPATH entry
    puts them in different folders, and the RPATH misses. Python itself knows where the wheel is, so
    the package loads that exact file first; the dynamic loader then matches our library's need for
    libnvshmem_host.so.3 by its soname to the copy already loaded, wherever it lives. NVSHMEM's own
    plugins (bootstrap, transports) sit beside it and are found from there.
    Returns the path loaded, or None when the wheel is not installed (an NVSHMEM_HOME build: its RPATH
    names that install)."""
    lib = wheel_nvshmem_host()
    if lib is None:
        return None
    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    return str(lib)


FIX = (
    "install the package, which builds and ships the library: `pip install <repository>/packages/cuda/python` "
    "(needs the CUDA toolkit and NVSHMEM: NVSHMEM_HOME or the nvidia-nvshmem-cu13 wheel); or, in a source "
    "checkout, build it with `npm run build:native -w @switchyard/cuda` (or, for the layout alone, "
    "`cmake -S packages/cuda -B build && cmake --build build --target switchyard_layout`); "
    "or point SWITCHYARD_CUDA_LIB (SWITCHYARD_LAYOUT_LIB for the layout alone) at a built library"
)
