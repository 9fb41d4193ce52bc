import type { Layout } from "../../layout/layout.js";
import type { Region, RegionName } from "../../layout/region.js";

/**
 * One simulated rank's memory: its symmetric heap (which peers write into) and its local
 * buffers, as plain ArrayBuffers laid out exactly as `computeLayout` says.
 */
export class RankHeap {
  readonly symmetric: ArrayBuffer;
  readonly local: ArrayBuffer;

  constructor(readonly layout: Layout) {
    this.symmetric = new ArrayBuffer(layout.symmetricBytes);
    this.local = new ArrayBuffer(layout.localBytes);
  }

  private region(name: RegionName): { buf: ArrayBuffer; r: Region } {
    const r = this.layout.regions[name];
    return { buf: r.symmetric ? this.symmetric : this.local, r };
  }

  u32(name: RegionName): Uint32Array {
    const { buf, r } = this.region(name);
    return new Uint32Array(buf, r.offset, r.bytes / 4);
  }

  i32(name: RegionName): Int32Array {
    const { buf, r } = this.region(name);
    return new Int32Array(buf, r.offset, r.bytes / 4);
  }

  f32(name: RegionName): Float32Array {
    const { buf, r } = this.region(name);
    return new Float32Array(buf, r.offset, r.bytes / 4);
  }

  /** Element view for bf16 (Uint16Array) or fp8 (Uint8Array) regions. */
  elems(name: RegionName): Uint16Array | Uint8Array {
    const { buf, r } = this.region(name);
    return r.dtype === "bf16"
      ? new Uint16Array(buf, r.offset, r.bytes / 2)
      : new Uint8Array(buf, r.offset, r.bytes);
  }
}
