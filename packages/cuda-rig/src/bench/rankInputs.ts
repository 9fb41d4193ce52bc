import { dtypeBytes, type EpConfig, scalesPerRow } from "@switchyard/core";
import type { NativeAddon } from "@switchyard/cuda";
import { DeviceTensor } from "@switchyard/cuda";
import { benchRouting, type Routing } from "./routing.js";

/** One input set of one rank on the device: x (random, never zeros), scales (fp8 input), routing. */
export interface InputSet {
  x: DeviceTensor;
  scales: DeviceTensor | undefined;
  idx: DeviceTensor;
  weights: DeviceTensor;
}

/** A rank's device inputs for a point: `rotate` input sets, expert outputs [rows, hidden], y. */
export class RankInputs {
  readonly sets: InputSet[] = [];
  /** Every rank's routing, per set: routings[set][rank]. */
  readonly routings: Routing[][] = [];
  readonly expertOut: DeviceTensor;
  readonly y: DeviceTensor;

  constructor(
    addon: NativeAddon,
    config: EpConfig,
    rank: number,
    rows: number,
    rotate: number,
    seed: number,
    stream: bigint,
  ) {
    const T = config.maxTokensPerRank;
    const H = config.hidden;
    const fp8In = config.inputDtype === "fp8-e4m3";
    const S = scalesPerRow(config, config.inputDtype);
    for (let set = 0; set < rotate; set++) {
      const all = Array.from({ length: config.ranks }, (_, r) => benchRouting(config, seed, set, r));
      this.routings.push(all);
      const x = DeviceTensor.alloc(T * H * dtypeBytes(config.inputDtype), addon);
      const base = BigInt(seed) * 1_000_003n + BigInt(set * 4096 + rank);
      addon.fillRandom(x.ptr, BigInt(T * H), fp8In ? 1 : 0, base, stream);
      let scales: DeviceTensor | undefined;
      if (fp8In) {
        scales = DeviceTensor.alloc(T * S * 4, addon);
        addon.fillRandom(scales.ptr, BigInt(T * S), 2, base + 1n, stream);
      }
      this.sets.push({
        x,
        scales,
        idx: DeviceTensor.from(all[rank].topkIdx, addon),
        weights: DeviceTensor.from(all[rank].topkWeights, addon),
      });
    }
    this.expertOut = DeviceTensor.alloc(rows * H * 2, addon);
    addon.fillRandom(this.expertOut.ptr, BigInt(rows * H), 3, BigInt(seed) + 77n, stream);
    this.y = DeviceTensor.alloc(T * H * 2, addon);
  }

  free(): void {
    for (const s of this.sets) for (const t of [s.x, s.scales, s.idx, s.weights]) t?.free();
    this.expertOut.free();
    this.y.free();
  }
}
