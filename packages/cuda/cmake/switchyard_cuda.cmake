# The CUDA part of CMakeLists.txt: libswitchyard_cuda.so, the Node addon, the C ABI fuzzer.
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

# NCCL for the bench's baseline: NCCL_HOME, the system's, or the nvidia-nccl wheel; else built
# without it (SY_WITH_NCCL=0: the baseline answers SY_ERR_UNSUPPORTED).
execute_process(COMMAND python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
                OUTPUT_VARIABLE SY_NCCL_WHEEL OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(SY_NCCL_HINTS $ENV{NCCL_HOME} /usr /usr/local ${SY_NCCL_WHEEL})
find_path(SY_NCCL_INCLUDE nccl.h PATHS ${SY_NCCL_HINTS} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_library(SY_NCCL_LIB NAMES nccl libnccl.so.2 PATHS ${SY_NCCL_HINTS} PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu
             NO_DEFAULT_PATH)
if(SY_NCCL_INCLUDE AND SY_NCCL_LIB AND NOT SY_NVSHMEM_STUB)
  message(STATUS "switchyard: NCCL ${SY_NCCL_LIB} (the bench's baseline)")
  set(SY_NCCL_DEFS SY_WITH_NCCL=1)
else()
  message(STATUS "switchyard: no NCCL: the baseline is built disabled")
  set(SY_NCCL_DEFS SY_WITH_NCCL=0)
  set(SY_NCCL_INCLUDE "")
  set(SY_NCCL_LIB "")
endif()

file(GLOB SY_KERNEL_SOURCES CONFIGURE_DEPENDS ${SY_NATIVE}/kernels/*.cu)
file(GLOB SY_HOST_SOURCES CONFIGURE_DEPENDS ${SY_NATIVE}/host/*.cc)
# The host core holds kernels and CUDA types too: compiled by nvcc, as build-native.sh did.
set_source_files_properties(${SY_HOST_SOURCES} PROPERTIES LANGUAGE CUDA)

add_library(switchyard_cuda SHARED ${SY_KERNEL_SOURCES} ${SY_HOST_SOURCES} ${SY_LAYOUT_SOURCES} ${SY_NVSHMEM_SOURCES})
target_include_directories(switchyard_cuda PUBLIC ${SY_INCLUDE} PRIVATE ${SY_NVSHMEM_INCLUDE} ${SY_NCCL_INCLUDE})
# SY_VERSION: sy_version's x.y.z (c_api.cc), the project's version from the repository's VERSION file.
target_compile_definitions(switchyard_cuda PRIVATE ${SY_NCCL_DEFS} "SY_VERSION=\"${PROJECT_VERSION}\"")
target_compile_options(switchyard_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)
target_link_libraries(switchyard_cuda PRIVATE ${SY_NVSHMEM_LIBS} ${SY_NCCL_LIB} CUDA::cudart)
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

# The Node addon: the binding only, every call through the exported C ABI.
set(SY_NODE_MODULES ${CMAKE_CURRENT_SOURCE_DIR}/../../node_modules)
if(SY_BUILD_NODE_ADDON AND EXISTS ${SY_NODE_MODULES}/node-addon-api/napi.h)
  file(GLOB SY_BINDING_SOURCES CONFIGURE_DEPENDS ${SY_NATIVE}/binding/*.cc)
  add_library(switchyard_addon MODULE ${SY_BINDING_SOURCES})
  target_include_directories(switchyard_addon PRIVATE ${SY_NODE_MODULES}/node-addon-api
                                                      ${SY_NODE_MODULES}/node-api-headers/include)
  target_compile_definitions(switchyard_addon PRIVATE NAPI_VERSION=8 NODE_ADDON_API_DISABLE_DEPRECATED
                                                      NAPI_CPP_EXCEPTIONS)
  target_link_libraries(switchyard_addon PRIVATE switchyard_cuda)
  set_target_properties(switchyard_addon PROPERTIES OUTPUT_NAME switchyard_cuda PREFIX "" SUFFIX ".node"
                                                    BUILD_RPATH "$ORIGIN")
elseif(SY_BUILD_NODE_ADDON)
  message(STATUS "switchyard: node-addon-api not in node_modules (npm ci first): no Node addon")
endif()

# The C ABI fuzzer: uses params.cuh's constants (nvcc), calls only the exported ABI.
if(SY_BUILD_ABI_FUZZ)
  file(GLOB SY_FUZZ_SOURCES CONFIGURE_DEPENDS ${SY_NATIVE}/tools/*.cc)
  set_source_files_properties(${SY_FUZZ_SOURCES} PROPERTIES LANGUAGE CUDA)
  add_executable(abi_fuzz ${SY_FUZZ_SOURCES})
  target_include_directories(abi_fuzz PRIVATE ${SY_INCLUDE})
  target_link_libraries(abi_fuzz PRIVATE switchyard_cuda CUDA::cudart)
  set_target_properties(abi_fuzz PROPERTIES CUDA_RUNTIME_LIBRARY Shared BUILD_RPATH "$ORIGIN")
endif()
