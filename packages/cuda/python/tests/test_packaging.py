"""What `pip install` builds and ships: pyproject.toml on scikit-build-core over packages/cuda's CMake,
the install rules that put the library into the package (and only under pip), the version from the
repository's VERSION file, and where the package looks for the library."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import c_compiler

PY = Path(__file__).resolve().parents[1]  # packages/cuda/python
PKG = PY.parent  # packages/cuda
ROOT = PKG.parents[1]


def pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs Python 3.11 (tomllib) or tomli")
    return tomllib.loads((PY / "pyproject.toml").read_text(encoding="utf-8"))


def skbuild() -> dict:
    return pyproject()["tool"]["scikit-build"]


def test_build_backend_is_scikit_build_core():
    build = pyproject()["build-system"]
    assert build["build-backend"] == "scikit_build_core.build"
    assert any(re.match(r"scikit-build-core\b", r) for r in build["requires"]), build["requires"]


def test_dependencies_declare_torch_and_nvshmem():
    deps = [re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0] for d in pyproject()["project"]["dependencies"]]
    assert "torch" in deps
    assert "nvidia-nvshmem-cu13" in deps


def test_readme_exists():
    assert (PY / pyproject()["project"]["readme"]).is_file()


def test_cmake_source_is_the_package_folder_above():
    sk = skbuild()
    source = (PY / sk["cmake"]["source-dir"]).resolve()
    assert source == PKG
    assert (source / "CMakeLists.txt").is_file()
    defines = sk["cmake"]["define"]
    assert defines["SY_BUILD_NODE_ADDON"] == "OFF" and defines["SY_BUILD_ABI_FUZZ"] == "OFF"
    assert sk["wheel"]["packages"] == ["switchyard_cuda"]


def test_version_comes_from_the_repository_version_file():
    project, sk = pyproject()["project"], skbuild()
    assert "version" not in project and "version" in project["dynamic"]
    meta = sk["metadata"]["version"]
    assert meta["provider"] == "scikit_build_core.metadata.regex"
    version_file = (PY / meta["input"]).resolve()
    assert version_file == ROOT / "VERSION"
    text = version_file.read_text(encoding="utf-8")
    match = re.search(meta["regex"], text, re.MULTILINE)
    assert match is not None and match.group("value") == text.strip()


def test_package_version_is_the_repository_version():
    import switchyard_cuda

    assert switchyard_cuda.__version__ == (ROOT / "VERSION").read_text(encoding="utf-8").strip()


def cmake_text(name: str) -> str:
    return (PKG / name).read_text(encoding="utf-8")


def test_install_rules_ship_the_library_into_the_package_under_pip_only():
    main = cmake_text("CMakeLists.txt")
    assert re.search(r"if\(SKBUILD\)\s*\n\s*include\(\$\{CMAKE_CURRENT_SOURCE_DIR\}/cmake/python_package\.cmake\)", main)
    rules = cmake_text("cmake/python_package.cmake")
    folder = re.search(r"set\(SY_PY_DIR (\w+)\)", rules)
    assert folder and [folder.group(1)] == skbuild()["wheel"]["packages"]
    components = set(skbuild()["install"]["components"])
    for target in ("switchyard_cuda", "switchyard_layout"):
        rule = re.search(rf"install\(TARGETS {target} LIBRARY DESTINATION \$\{{SY_PY_DIR\}}[^)]*COMPONENT (\w+)\)", rules)
        assert rule, f"no install rule for {target}"
        assert rule.group(1) in components
    assert "$ORIGIN/../nvidia/nvshmem/lib" in rules
    assert re.search(r"if\(NOT SY_CUDA_OK\)\s*\n\s*message\(FATAL_ERROR", rules)
    # The Node build installs nothing: no install() outside the file read under SKBUILD.
    for other in ("CMakeLists.txt", "cmake/switchyard_cuda.cmake"):
        assert "install(" not in cmake_text(other), other


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_pip_build_without_cuda_fails_naming_it(tmp_path):
    """Configured as pip does (SKBUILD) with no CUDA compiler: a clear error, not a wheel without the library."""
    env = {**os.environ, "CUDACXX": str(tmp_path / "no-nvcc")}
    env.pop("NVSHMEM_HOME", None)
    run = subprocess.run(
        ["cmake", "-S", str(PKG), "-B", str(tmp_path / "b"), "-DSKBUILD=ON", "-DSY_BUILD_NODE_ADDON=OFF",
         "-DSY_BUILD_ABI_FUZZ=OFF", f"-DCMAKE_C_COMPILER={shutil.which('cc') or 'cc'}",
         f"-DCMAKE_CXX_COMPILER={shutil.which('c++') or 'c++'}"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    if "No CMAKE_C_COMPILER could be found" in run.stderr:
        pytest.skip("no C compiler for cmake")
    assert run.returncode != 0
    said = " ".join(run.stderr.split())  # CMake wraps its messages
    assert "pip install builds libswitchyard_cuda, which needs CUDA and NVSHMEM" in said, run.stderr
    assert "nvcc (the CUDA toolkit's compiler) was not found" in said, run.stderr


def test_library_search_order(monkeypatch):
    from switchyard_cuda import _loader

    monkeypatch.setenv("SWITCHYARD_CUDA_LIB", "/somewhere/libswitchyard_cuda.so.1")
    tries = _loader.candidates("cuda")
    assert tries[0] == "/somewhere/libswitchyard_cuda.so.1"
    shipped = str(_loader.HERE / "libswitchyard_cuda.so.1")
    checkout = str(PKG / "build" / "libswitchyard_cuda.so.1")
    assert tries.index(shipped) < tries.index(checkout)
    assert _loader.is_shipped(shipped) and not _loader.is_shipped(checkout)


def test_missing_library_says_what_to_do(monkeypatch, tmp_path):
    from switchyard_cuda import _abi, _loader
    from switchyard_cuda.errors import LibraryNotFoundError

    monkeypatch.setattr(_loader, "HERE", tmp_path / "pkg" / "switchyard_cuda")
    monkeypatch.setattr(_loader, "CUDA_NAMES", ["libswitchyard_cuda_absent.so.1"])
    monkeypatch.setenv("SWITCHYARD_CUDA_LIB", str(tmp_path / "nothing.so"))
    with pytest.raises(LibraryNotFoundError) as e:
        _abi.load("cuda")
    message = str(e.value)
    assert str(tmp_path / "nothing.so") in message
    assert "pip install" in message and "SWITCHYARD_CUDA_LIB" in message


def test_preload_finds_the_nvshmem_wheel(monkeypatch, tmp_path):
    """A stand-in nvidia.nvshmem package with lib/libnvshmem_host.so.3: found and loaded by its path."""
    cc = c_compiler()
    if cc is None:
        pytest.skip("no C compiler to build a stand-in libnvshmem_host.so.3")
    lib = tmp_path / "site" / "nvidia" / "nvshmem" / "lib"
    lib.mkdir(parents=True)
    (tmp_path / "empty.c").write_text("int sy_stand_in_nvshmem(void) { return 3; }\n")
    subprocess.run([cc, "-shared", "-fPIC", str(tmp_path / "empty.c"), "-o", str(lib / "libnvshmem_host.so.3")],
                   check=True)
    for name in [m for m in sys.modules if m == "nvidia" or m.startswith("nvidia.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    from switchyard_cuda import _loader

    found = _loader.wheel_nvshmem_host()
    assert found == lib / "libnvshmem_host.so.3"
    assert _loader.preload_nvshmem() == str(found)
