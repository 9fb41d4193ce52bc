"""The project's version: one value, in the repository's VERSION file.

Installed, the build wrote it into _build_config.py (CMake reads VERSION; the wheel's metadata takes
it from the same file through pyproject.toml). In a source checkout, VERSION itself is read.
"""

from __future__ import annotations

from pathlib import Path


def read_version() -> str:
    try:
        from ._build_config import VERSION

        return VERSION
    except ImportError:
        pass
    checkout = Path(__file__).resolve().parents[4] / "VERSION"  # switchyard_cuda/python/cuda/packages/<root>
    if checkout.is_file():
        return checkout.read_text(encoding="utf-8").strip()
    return "0+unknown"
