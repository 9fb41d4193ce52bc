import type { NativeAddon, NativeNccl } from "@switchyard/cuda";

/**
 * One process's NCCL communicator, for the bench's baseline. Creating it is collective: every
 * rank passes rank 0's `ncclUniqueId()` (relayed like NVSHMEM's unique id). NCCL_NVLS_ENABLE=0 is
 * forced in the process before NCCL starts.
 */
export class NcclComm {
  private destroyed = false;

  private constructor(
    readonly native: NativeNccl,
    readonly rank: number,
    readonly ranks: number,
  ) {}

  static create(
    addon: NativeAddon,
    uniqueId: Uint8Array,
    rank: number,
    ranks: number,
    device: number,
  ): NcclComm {
    if (!(uniqueId instanceof Uint8Array) || uniqueId.length !== 128) {
      throw new TypeError("NcclComm.create: uniqueId must be the 128 bytes of rank 0's ncclUniqueId()");
    }
    return new NcclComm(new addon.Nccl(uniqueId, rank, ranks, device), rank, ranks);
  }

  /** NCCL's version code (e.g. 22805 for 2.28.5). */
  version(): number {
    return this.native.version();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.native.destroy();
  }
}
