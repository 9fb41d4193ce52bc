import { requireNative } from "./native/loader.js";
import type { NativeAddon, NativeRuntime, NativeRuntimeInfo, NativeRuntimeOptions } from "./native/types.js";

/** Bytes of an NVSHMEM unique id. */
export const UNIQUE_ID_BYTES = 128;

/** Makes a new NVSHMEM unique id. Rank 0 calls it and hands the bytes to every rank. */
export function getUniqueId(addon: NativeAddon = requireNative()): Uint8Array {
  return addon.getUniqueId();
}

export interface RuntimeOptions {
  /** The unique id rank 0 made (getUniqueId), 128 bytes. */
  uniqueId: Uint8Array;
  rank: number;
  ranks: number;
  /** CUDA device index in this process (default: rank modulo the visible GPUs is the caller's choice; 0). */
  device?: number;
  /** The library's choices (transport, pointer checks, contiguous SM budget); see `runtimeOptionsFromEnv`. */
  native?: NativeRuntimeOptions;
}

/**
 * One process's NVSHMEM runtime on one GPU. Creating it is collective: every rank of the world
 * calls `CudaRuntime.create` with the same unique id. One per process.
 */
export class CudaRuntime {
  private destroyed = false;

  private constructor(
    readonly native: NativeRuntime,
    readonly addon: NativeAddon,
    readonly rank: number,
    readonly ranks: number,
  ) {}

  static create(options: RuntimeOptions, addon: NativeAddon = requireNative()): CudaRuntime {
    const { uniqueId, rank, ranks } = options;
    if (!(uniqueId instanceof Uint8Array) || uniqueId.length !== UNIQUE_ID_BYTES) {
      throw new TypeError(
        `CudaRuntime.create: uniqueId must be ${UNIQUE_ID_BYTES} bytes (getUniqueId on rank 0)`,
      );
    }
    if (!Number.isInteger(ranks) || ranks < 1 || !Number.isInteger(rank) || rank < 0 || rank >= ranks) {
      throw new RangeError(`CudaRuntime.create: rank ${rank} is outside [0, ${ranks})`);
    }
    const native = new addon.Runtime(uniqueId, rank, ranks, options.device ?? 0, options.native ?? {});
    return new CudaRuntime(native, addon, rank, ranks);
  }

  info(): NativeRuntimeInfo {
    return this.native.info();
  }

  /** Stream-ordered barrier over all ranks. */
  barrier(stream = 0n): void {
    this.native.barrier(stream);
  }

  /** Finalises NVSHMEM (collective). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.native.destroy();
  }
}
