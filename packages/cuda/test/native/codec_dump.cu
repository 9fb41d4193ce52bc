// Host program: dumps the device codec (codec.cuh, compiled for the host) for every bf16 input,
// so test/codec.native.test.ts can compare it bit for bit with core's TypeScript codecs.
// Output (binary, little endian): for each s in the list: 65536 fp8 bytes of encodeFp8Scaled(x, s);
// then 65536 int8 scale exponents scaleExponent(|x|), then 65536 * 2 bytes floatToBf16 of a grid.
#include <cstdio>
#include <cstring>
#include <vector>

#include "../../src/native/kernels/codec.cuh"

int main() {
  const int exps[] = {-126, -125, -120, -100, -60, -20, -9, -6, -3, -1, 0, 1, 2, 3, 7, 10, 20, 60, 100, 119, 120, 127};
  std::vector<unsigned char> out;
  for (int s : exps) {
    for (unsigned x = 0; x < 65536; ++x) out.push_back(sy::encodeFp8Scaled(static_cast<uint16_t>(x), s));
  }
  for (unsigned x = 0; x < 65536; ++x) out.push_back(static_cast<unsigned char>(static_cast<signed char>(sy::scaleExponent(sy::finiteAbsBits(static_cast<uint16_t>(x))))));
  for (unsigned i = 0; i < 65536; ++i) {
    uint32_t bits = i * 65537u + 12345u;  // spread over all fp32 classes
    float f;
    std::memcpy(&f, &bits, 4);
    uint16_t b = sy::floatToBf16(f);
    out.push_back(static_cast<unsigned char>(b & 0xff));
    out.push_back(static_cast<unsigned char>(b >> 8));
  }
  fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}
