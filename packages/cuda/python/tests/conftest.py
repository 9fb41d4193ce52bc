"""Test setup: the layout library compiled from src/native/layout with the host C compiler (no
CUDA needed), unless SWITCHYARD_LAYOUT_LIB already names one, and the host C compiler for the
header probe; tests that need a compiler skip, saying why, when there is none (fail under CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2]


def c_compiler() -> str | None:
    return next((c for c in (os.environ.get("CC"), "cc", "gcc") if c and shutil.which(c)), None)


def without_compiler(what: str):
    """Skips, saying why; fails instead under CI (the CI environment variable set), where these
    checks must run (scripts/setup.sh installs a compiler)."""
    message = f"no C compiler (set CC, or install cc / gcc) to build {what}"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must run these tests (bash scripts/setup.sh installs gcc)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def cc() -> str:
    found = c_compiler()
    if found is None:
        without_compiler("the header probe")
    return found


def _compile_layout(tmp: Path) -> str | None:
    cc = c_compiler()
    if cc is None:
        return None
    src = sorted(p for p in (PKG / "src/native/layout").glob("*.c") if p.name != "layout_cli.c")
    out = tmp / "libswitchyard_layout.so"
    subprocess.run(
        [cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-fvisibility=hidden",
         "-I", str(PKG / "include"), *map(str, src), "-o", str(out)],
        check=True,
    )
    return str(out)


@pytest.fixture(scope="session")
def layout_lib(tmp_path_factory):
    from switchyard_cuda import _abi

    path = os.environ.get("SWITCHYARD_LAYOUT_LIB") or _compile_layout(tmp_path_factory.mktemp("layout"))
    if path is None:
        without_compiler("the layout library (or set SWITCHYARD_LAYOUT_LIB)")
    return _abi.load("layout", path)


def cuda_skip_reason() -> str | None:
    """Why the GPU tests cannot run here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU visible to torch"
    from switchyard_cuda import _abi
    from switchyard_cuda.errors import LibraryNotFoundError

    try:
        _abi.load("cuda")
    except LibraryNotFoundError as e:
        return f"libswitchyard_cuda not loadable ({str(e).splitlines()[0]})"
    return None
