# The CUDA part of CMakeLists.txt: libswitchyard_cuda.so, the bench library (cmake/switchyard_bench.cmake),
# the Node addon, the C ABI fuzzer.
option(SY_BUILD_BENCH "Build libswitchyard_cuda_bench.so (bench/native: NCCL baseline, random fills, peer-write bench; the Node addon's bench calls)" ON)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
set(CMAKE_CUDA_ARCHITECTURES ${SY_CUDA_ARCH})

# NVSHMEM: the real libraries, or the CPU-test stand-in compiled into the library.
if(SY_NVSHMEM_STUB)
  set(SY_NVSHMEM_INCLUDE ${CMAKE_CURRENT_SOURCE_DIR}/scripts/nvshmem-stub/include)
  set(SY_NVSHMEM_SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/scripts/nvshmem-stub/nvshmem_stub.cu)
  set(SY_NVSHMEM_LIBS "")
else()
  set(SY_NVSHMEM_INCLUDE ${NVSHMEM_HOME}/include)
  set(SY_NVSHMEM_SOURCES "")
  find_library(SY_NVSHMEM_HOST NAMES nvshmem_host libnvshmem_host.so.3 PATHS ${NVSHMEM_HOME}/lib NO_DEFAULT_PATH REQUIRED)
  find_library(SY_NVSHMEM_DEVICE NAMES libnvshmem_device.a PATHS ${NVSHMEM_HOME}/lib NO_DEFAULT_PATH REQUIRED)
  set(SY_NVSHMEM_LIBS ${SY_NVSHMEM_HOST} ${SY_NVSHMEM_DEVICE})
endif()

file(GLOB SY_KERNEL_SOURCES CONFIGURE_DEPENDS ${SY_NATIVE}/kernels/*.cu)
file(GLOB SY_HOST_SOURCES CONFIGURE_DEPENDS ${SY_NATIVE}/host/*.cc)
# The host core holds kernels and CUDA types too: compiled by nvcc, as build-native.sh did.
set_source_files_properties(${SY_HOST_SOURCES} PROPERTIES LANGUAGE CUDA)

add_library(switchyard_cuda SHARED ${SY_KERNEL_SOURCES} ${SY_HOST_SOURCES} ${SY_LAYOUT_SOURCES} ${SY_NVSHMEM_SOURCES})
target_include_directories(switchyard_cuda PUBLIC ${SY_INCLUDE} PRIVATE ${SY_NVSHMEM_INCLUDE})
# SY_VERSION: sy_version's x.y.z (c_api.cc), the project's version from the repository's VERSION file.
target_compile_definitions(switchyard_cuda PRIVATE "SY_VERSION=\"${PROJECT_VERSION}\"")
target_compile_options(switchyard_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)
target_link_libraries(switchyard_cuda PRIVATE ${SY_NVSHMEM_LIBS} CUDA::cudart)
set_target_properties(switchyard_cuda PROPERTIES
  CUDA_SEPARABLE_COMPILATION ON
  CUDA_RESOLVE_DEVICE_SYMBOLS ON
  CUDA_RUNTIME_LIBRARY Shared
  VERSION ${PROJECT_VERSION}
  SOVERSION ${SY_ABI_VERSION})
target_link_options(switchyard_cuda PRIVATE -Wl,--version-script=${SY_NATIVE}/exports.map -Wl,--no-undefined)
if(NOT SY_NVSHMEM_STUB)
  get_filename_component(SY_NVSHMEM_LIBDIR ${SY_NVSHMEM_HOST} DIRECTORY)
  set_target_properties(switchyard_cuda PROPERTIES BUILD_RPATH "${SY_NVSHMEM_LIBDIR};${CUDAToolkit_LIBRARY_DIR}")
endif()

if(SY_BUILD_BENCH)
  include(${CMAKE_CURRENT_LIST_DIR}/switchyard_bench.cmake)
endif()

# The Node addon: the binding only, every call through the exported C ABIs (the product's, and the
# bench library's when it is built: bench/native/binding; without it the addon has no bench calls).
set(SY_NODE_MODULES ${CMAKE_CURRENT_SOURCE_DIR}/../../node_modules)
if(SY_BUILD_NODE_ADDON AND EXISTS ${SY_NODE_MODULES}/node-addon-api/napi.h)
  file(GLOB SY_BINDING_SOURCES CONFIGURE_DEPENDS ${SY_NATIVE}/binding/*.cc)
  add_library(switchyard_addon MODULE ${SY_BINDING_SOURCES})
  target_include_directories(switchyard_addon PRIVATE ${SY_NODE_MODULES}/node-addon-api
                                                      ${SY_NODE_MODULES}/node-api-headers/include)
  target_compile_definitions(switchyard_addon PRIVATE NAPI_VERSION=8 NODE_ADDON_API_DISABLE_DEPRECATED
                                                      NAPI_CPP_EXCEPTIONS)
  target_link_libraries(switchyard_addon PRIVATE switchyard_cuda)
  if(SY_BUILD_BENCH)
    file(GLOB SY_BENCH_BINDING_SOURCES CONFIGURE_DEPENDS ${SY_BENCH}/binding/*.cc)
    target_sources(switchyard_addon PRIVATE ${SY_BENCH_BINDING_SOURCES})
    target_include_directories(switchyard_addon PRIVATE ${SY_NATIVE}/binding ${SY_BENCH}/binding)
    target_compile_definitions(switchyard_addon PRIVATE SY_WITH_BENCH=1)
    target_link_libraries(switchyard_addon PRIVATE switchyard_cuda_bench)
  endif()
  set_target_properties(switchyard_addon PROPERTIES OUTPUT_NAME switchyard_cuda PREFIX "" SUFFIX ".node"
                                                    BUILD_RPATH "$ORIGIN")
elseif(SY_BUILD_NODE_ADDON)
  message(STATUS "switchyard: node-addon-api not in node_modules (npm ci first): no Node addon")
endif()

# The C ABI fuzzer (a test tool: test/native/abi_fuzz): uses params.cuh's constants (nvcc), calls
# only the exported ABIs; the bench library's calls too when it is built.
set(SY_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/test/native/abi_fuzz)
if(SY_BUILD_ABI_FUZZ AND EXISTS ${SY_FUZZ_DIR}/abi_fuzz.cc)
  file(GLOB SY_FUZZ_SOURCES CONFIGURE_DEPENDS ${SY_FUZZ_DIR}/*.cc)
  if(NOT SY_BUILD_BENCH)
    list(FILTER SY_FUZZ_SOURCES EXCLUDE REGEX "abi_fuzz_bench\\.cc$")
  endif()
  set_source_files_properties(${SY_FUZZ_SOURCES} PROPERTIES LANGUAGE CUDA)
  add_executable(abi_fuzz ${SY_FUZZ_SOURCES})
  target_include_directories(abi_fuzz PRIVATE ${SY_INCLUDE})
  target_link_libraries(abi_fuzz PRIVATE switchyard_cuda CUDA::cudart)
  if(SY_BUILD_BENCH)
    target_compile_definitions(abi_fuzz PRIVATE SY_ABI_FUZZ_BENCH=1)
    target_link_libraries(abi_fuzz PRIVATE switchyard_cuda_bench)
  endif()
  set_target_properties(abi_fuzz PROPERTIES CUDA_RUNTIME_LIBRARY Shared BUILD_RPATH "$ORIGIN")
endif()
