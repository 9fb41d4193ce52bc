# libswitchyard_cuda_bench.so (bench/native, SY_BUILD_BENCH): what `switchyard bench` measures
# beside the product, kept out of the product library: the NCCL all-to-all baseline, device-side
# random inputs, the peer-write bench. Linked against libswitchyard_cuda.so, NCCL and NVSHMEM's host
# library (the peer-write bench's symmetric buffer); exports exactly the SY_API functions of
# bench/native/include/switchyard_bench.h (hidden visibility + bench/native/exports.map).
set(SY_BENCH ${CMAKE_CURRENT_SOURCE_DIR}/bench/native)

# NCCL: NCCL_HOME, the system's, or the nvidia-nccl wheel; else the baseline is built disabled
# (SY_WITH_NCCL=0: its calls answer SY_ERR_UNSUPPORTED).
execute_process(COMMAND python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
                OUTPUT_VARIABLE SY_NCCL_WHEEL OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(SY_NCCL_HINTS $ENV{NCCL_HOME} /usr /usr/local ${SY_NCCL_WHEEL})
find_path(SY_NCCL_INCLUDE nccl.h PATHS ${SY_NCCL_HINTS} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_library(SY_NCCL_LIB NAMES nccl libnccl.so.2 PATHS ${SY_NCCL_HINTS} PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu
             NO_DEFAULT_PATH)
if(SY_NCCL_INCLUDE AND SY_NCCL_LIB AND NOT SY_NVSHMEM_STUB)
  message(STATUS "switchyard: NCCL ${SY_NCCL_LIB} (the bench library's baseline)")
  set(SY_NCCL_DEFS SY_WITH_NCCL=1)
else()
  message(STATUS "switchyard: no NCCL: the bench library's baseline is built disabled")
  set(SY_NCCL_DEFS SY_WITH_NCCL=0)
  set(SY_NCCL_INCLUDE "")
  set(SY_NCCL_LIB "")
endif()

file(GLOB SY_BENCH_SOURCES CONFIGURE_DEPENDS ${SY_BENCH}/kernels/*.cu ${SY_BENCH}/host/*.cc)
# The product's host helpers it reuses (its own copies: handle table, parameter-block check).
list(APPEND SY_BENCH_SOURCES ${SY_NATIVE}/host/handles.cc ${SY_NATIVE}/host/params_check.cc)
set_source_files_properties(${SY_BENCH}/host/c_api_bench.cc ${SY_BENCH}/host/baseline.cc ${SY_BENCH}/host/peer_write.cc
                            ${SY_NATIVE}/host/handles.cc ${SY_NATIVE}/host/params_check.cc PROPERTIES LANGUAGE CUDA)
if(SY_NVSHMEM_STUB)
  set(SY_BENCH_NVSHMEM_LIBS "")
  list(APPEND SY_BENCH_SOURCES ${SY_NVSHMEM_SOURCES})
else()
  # The device library too: peer_write.cc includes NVSHMEM's headers in a separably compiled CUDA
  # unit, whose device link needs the device state they declare (this library's own copy, which
  # none of its kernels use: they store through nvshmem_ptr addresses).
  set(SY_BENCH_NVSHMEM_LIBS ${SY_NVSHMEM_HOST} ${SY_NVSHMEM_DEVICE})
endif()

add_library(switchyard_cuda_bench SHARED ${SY_BENCH_SOURCES})
target_include_directories(switchyard_cuda_bench PUBLIC ${SY_BENCH}/include
                           PRIVATE ${SY_NATIVE}/host ${SY_NVSHMEM_INCLUDE} ${SY_NCCL_INCLUDE})
target_compile_definitions(switchyard_cuda_bench PRIVATE ${SY_NCCL_DEFS})
target_compile_options(switchyard_cuda_bench PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)
target_link_libraries(switchyard_cuda_bench PUBLIC switchyard_cuda PRIVATE ${SY_BENCH_NVSHMEM_LIBS} ${SY_NCCL_LIB}
                      CUDA::cudart)
# Separable compilation as the product's: NVSHMEM's headers (peer_write.cc) declare device state.
set_target_properties(switchyard_cuda_bench PROPERTIES
  CUDA_SEPARABLE_COMPILATION ON
  CUDA_RESOLVE_DEVICE_SYMBOLS ON
  CUDA_RUNTIME_LIBRARY Shared
  VERSION ${PROJECT_VERSION}
  SOVERSION ${SY_ABI_VERSION}
  BUILD_RPATH "$ORIGIN")
target_link_options(switchyard_cuda_bench PRIVATE -Wl,--version-script=${SY_BENCH}/exports.map -Wl,--no-undefined)
if(NOT SY_NVSHMEM_STUB)
  get_filename_component(SY_NVSHMEM_LIBDIR ${SY_NVSHMEM_HOST} DIRECTORY)
  set_target_properties(switchyard_cuda_bench PROPERTIES BUILD_RPATH "$ORIGIN;${SY_NVSHMEM_LIBDIR};${CUDAToolkit_LIBRARY_DIR}")
endif()
