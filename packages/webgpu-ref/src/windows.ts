import { UnsupportedError } from "@switchyard/core";

/** One storage binding of a buffer: bytes [base, base + size), assigned the items whose start byte / stride == index. */
export interface Window {
  base: number;
  size: number;
  stride: number;
  index: number;
}

/** u32 max: with this stride every item start (< 2^32 - 1) belongs to window 0. */
export const WHOLE = 0xffffffff;

/**
 * Splits a buffer too large for one storage binding into overlapping windows. Window i binds
 * [i * stride, i * stride + maxBinding); an item (a row, a signal word, a token's block) starting at
 * byte a is handled by window floor(a / stride) alone, which holds it whole as long as the item is
 * at most maxBinding - stride bytes long. A buffer that fits is one window.
 */
export function planWindows(
  bufferBytes: number,
  maxBinding: number,
  maxItemBytes: number,
  what: string,
): Window[] {
  const cap = Math.floor(maxBinding / 256) * 256;
  if (bufferBytes <= cap) return [{ base: 0, size: bufferBytes, stride: WHOLE, index: 0 }];
  const stride = Math.floor((cap - maxItemBytes) / 256) * 256;
  if (stride < 256) {
    throw new UnsupportedError(
      "webgpu",
      `${what}: a row of ${maxItemBytes} bytes does not fit a storage binding of ${cap} bytes (maxStorageBufferBindingSize)`,
    );
  }
  const count = Math.floor((bufferBytes - 1) / stride) + 1;
  return Array.from({ length: count }, (_, index) => {
    const base = index * stride;
    return { base, size: Math.min(cap, bufferBytes - base), stride, index };
  });
}
