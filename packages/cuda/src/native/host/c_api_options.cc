// The versioned part of the C ABI: the ABI version and the runtime options (struct_size first),
// which replace the environment variables the library once read itself.
#include <cstddef>
#include <cstring>

#include "error.h"
#include "guard.h"
#include "runtime.h"
#include "switchyard_cuda.h"

namespace {

/// The caller's options read into this library's struct: fields past the caller's struct_size keep
/// their defaults; a larger struct_size is accepted when every byte this library does not know is 0.
/// `reserved` (the first version's padding, so that kernel_per_half lies past its 24 bytes) is
/// never read.
sy_runtime_options readOptions(const sy_runtime_options* in) {
  sy_runtime_options o;
  sy_runtime_options_init(&o);
  if (in == nullptr) return o;
  const size_t size = in->struct_size;
  const size_t first = offsetof(sy_runtime_options, transport) + sizeof(o.transport);
  SY_REQUIRE(size >= first, "sy_runtime_create_with_options: options->struct_size "
                                << size << " is smaller than any version of sy_runtime_options (" << first
                                << "); set it with sy_runtime_options_init");
  if (size > sizeof o) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(in);
    for (size_t i = sizeof o; i < size; ++i) {
      SY_REQUIRE(bytes[i] == 0, "sy_runtime_create_with_options: options->struct_size "
                                    << size << " has fields this library (" << sizeof o
                                    << " bytes) does not know, set at byte " << i << "; use a newer library");
    }
  }
  std::memcpy(&o, in, size < sizeof o ? size : sizeof o);
  o.struct_size = sizeof o;
  SY_REQUIRE(o.transport == SY_TRANSPORT_AUTO || o.transport == SY_TRANSPORT_PUT,
             "sy_runtime_create_with_options: options->transport " << o.transport
                                                                   << " must be SY_TRANSPORT_AUTO (0) or SY_TRANSPORT_PUT (1)");
  SY_REQUIRE(o.pointer_checks == 0 || o.pointer_checks == 1,
             "sy_runtime_create_with_options: options->pointer_checks " << o.pointer_checks << " must be 0 or 1");
  SY_REQUIRE(o.kernel_per_half == 0 || o.kernel_per_half == 1,
             "sy_runtime_create_with_options: options->kernel_per_half " << o.kernel_per_half << " must be 0 or 1");
  SY_REQUIRE(o.contiguous_blocks >= 0, "sy_runtime_create_with_options: options->contiguous_blocks "
                                           << o.contiguous_blocks << " must be >= 0 (0: the default, 24)");
  return o;
}

}  // namespace

extern "C" {

int sy_abi_version(void) { return SY_ABI_VERSION; }

void sy_runtime_options_init(sy_runtime_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->transport = SY_TRANSPORT_AUTO;
  options->pointer_checks = 1;
  options->contiguous_blocks = 0;
  options->kernel_per_half = 0;
}

int sy_runtime_create_with_options(const uint8_t unique_id[SY_UNIQUE_ID_BYTES], int rank, int ranks, int device,
                                   const sy_runtime_options* options, sy_runtime** out) {
  return guard(nullptr, [&] {
    SY_REQUIRE(out != nullptr, "sy_runtime_create: out is NULL");
    *out = nullptr;
    const sy_runtime_options o = readOptions(options);
    sy_runtime* rt = sy::createRuntime(unique_id, rank, ranks, device, o);
    *out = static_cast<sy_runtime*>(sy::registerHandle(sy::Kind::kRuntime, std::shared_ptr<sy_runtime>(rt)));
  });
}

}  // extern "C"
