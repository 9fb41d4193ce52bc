import { DestroyedError } from "@switchyard/core";
import type { DeviceRef } from "./endpoint.js";
import { requireNative } from "./native/loader.js";
import type { NativeAddon, NativeDeviceBuffer } from "./native/types.js";

type View = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array;
type ViewCtor<T extends View> = { new (length: number): T; BYTES_PER_ELEMENT: number };

/** Device memory owned by JavaScript: allocate, upload, download, free. */
export class DeviceTensor implements DeviceRef {
  private buffer: NativeDeviceBuffer | null;

  private constructor(
    buffer: NativeDeviceBuffer,
    private readonly addon: NativeAddon,
  ) {
    this.buffer = buffer;
  }

  static alloc(bytes: number, addon: NativeAddon = requireNative()): DeviceTensor {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`DeviceTensor.alloc: bytes ${bytes}`);
    return new DeviceTensor(new addon.DeviceBuffer(bytes), addon);
  }

  /** A new tensor holding a copy of `view`. */
  static from(view: View, addon: NativeAddon = requireNative()): DeviceTensor {
    const t = DeviceTensor.alloc(view.byteLength, addon);
    t.upload(view);
    return t;
  }

  private live(): NativeDeviceBuffer {
    if (this.buffer === null) throw new DestroyedError("DeviceTensor");
    return this.buffer;
  }

  get ptr(): bigint {
    return this.live().ptr;
  }

  get bytes(): number {
    return this.buffer?.bytes ?? 0;
  }

  /** Copies `view` to byte `offset` of the tensor. */
  upload(view: View, offset = 0): void {
    const b = this.live();
    if (offset < 0 || offset + view.byteLength > b.bytes) {
      throw new RangeError(`DeviceTensor.upload: ${view.byteLength} bytes at ${offset} exceed ${b.bytes}`);
    }
    if (view.byteLength > 0) this.addon.copyToDevice(b.ptr + BigInt(offset), view);
  }

  /** A host copy of `length` elements (default: the whole tensor) starting at byte `offset`. */
  download<T extends View>(ctor: ViewCtor<T>, length?: number, offset = 0): T {
    const b = this.live();
    const n = length ?? Math.floor((b.bytes - offset) / ctor.BYTES_PER_ELEMENT);
    const out = new ctor(n);
    if (offset + out.byteLength > b.bytes) throw new RangeError("DeviceTensor.download: past the end");
    if (out.byteLength > 0) this.addon.copyToHost(out, b.ptr + BigInt(offset));
    return out;
  }

  fill(byte: number): void {
    const b = this.live();
    this.addon.memset(b.ptr, byte, b.bytes);
  }

  free(): void {
    this.buffer?.free();
    this.buffer = null;
  }
}
