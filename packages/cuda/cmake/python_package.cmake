# The Python package's part of CMakeLists.txt, read only under pip (scikit-build-core sets SKBUILD):
# installs libswitchyard_cuda.so* and libswitchyard_layout.so into the package folder
# (switchyard_cuda/), with _build_config.py saying what they were built from. The Node build never
# reads this file and installs nothing.
if(NOT SY_CUDA_OK)
  message(FATAL_ERROR "switchyard: pip install builds libswitchyard_cuda, which needs CUDA and NVSHMEM:\n"
                      "  ${SY_CUDA_MISSING}\n"
                      "Then run pip again (see packages/cuda/python/README.md, Requirements).")
endif()
if(SY_NVSHMEM_STUB)
  message(WARNING "switchyard: this wheel holds the NVSHMEM stand-in (SY_NVSHMEM_STUB): it cannot start a runtime; "
                  "for looking at the wheel's layout only, never install it for use")
endif()

# Where the shipped library finds libnvshmem_host.so.3 at run time, with no LD_LIBRARY_PATH:
#  - $ORIGIN/../nvidia/nvshmem/lib: the nvidia-nvshmem-cu13 wheel in the same site-packages;
#  - the NVSHMEM and CUDA runtime folders this build used (a local install keeps working where they are);
#  - and, where the RPATH misses (the wheel in another site-packages: a venv with
#    --system-site-packages, a --user install), the package preloads the wheel's libnvshmem_host.so.3
#    by its path before loading the library (switchyard_cuda/_loader.py says why that is robust).
set(SY_INSTALL_RPATH "$ORIGIN/../nvidia/nvshmem/lib")
if(NOT SY_NVSHMEM_STUB)
  list(APPEND SY_INSTALL_RPATH "${SY_NVSHMEM_LIBDIR}")
endif()
list(APPEND SY_INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
# A wheel holds no symbolic links: one file, named by the soname (libswitchyard_cuda.so.1), so the
# file version is the ABI version here (the Node build keeps the project's x.y.z).
set_target_properties(switchyard_cuda PROPERTIES INSTALL_RPATH "${SY_INSTALL_RPATH}" VERSION ${SY_ABI_VERSION})

# SKBUILD_PROJECT_NAME's import package: switchyard_cuda/ in the wheel (and in site-packages).
set(SY_PY_DIR switchyard_cuda)
install(TARGETS switchyard_cuda LIBRARY DESTINATION ${SY_PY_DIR} NAMELINK_SKIP COMPONENT python)
install(TARGETS switchyard_layout LIBRARY DESTINATION ${SY_PY_DIR} COMPONENT python)
if(SY_NVSHMEM_STUB)
  set(SY_NVSHMEM_SOURCE "stub")
endif()
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/_build_config.py CONTENT [[
"""What the shipped library was built from (written by packages/cuda/cmake/python_package.cmake)."""

VERSION = "@PROJECT_VERSION@"
NVSHMEM_SOURCE = "@SY_NVSHMEM_SOURCE@"  # "wheel" (nvidia-nvshmem-cu13), "NVSHMEM_HOME" or "stub"
CUDA_ARCH = "@SY_CUDA_ARCH@"
]] @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/_build_config.py DESTINATION ${SY_PY_DIR} COMPONENT python)
