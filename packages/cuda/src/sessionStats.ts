import {
  blockPlacement,
  type EpConfig,
  localExperts,
  peerTraffic,
  rowsBySource,
  type StatsEntry,
  type StepStats,
  stepStatsOf,
} from "@switchyard/core";
import type { EndpointStats } from "./endpoint.js";

/**
 * Rows rank `rank`'s dispatchSend writes to each destination: the tokens of its DP group it owns
 * (t % dpSize == rank % dpSize), once per used slot, to the rank that hosts the slot's expert.
 */
export function dispatchRows(config: Readonly<EpConfig>, rank: number, topkIdx: Int32Array): number[] {
  const K = config.topK;
  const dp = config.dpSize;
  const place = blockPlacement(config);
  const rows = new Array<number>(config.ranks).fill(0);
  for (let i = 0; i < topkIdx.length; i++) {
    const e = topkIdx[i];
    if (e >= 0 && Math.floor(i / K) % dp === rank % dp) rows[place.rankOf(e)]++;
  }
  return rows;
}

/** Rows each expert rank announces to a rank at combineRecv: every used slot of its tokens, by owner. */
export function combineExpected(config: Readonly<EpConfig>, topkIdx: Int32Array): number[] {
  const place = blockPlacement(config);
  const rows = new Array<number>(config.ranks).fill(0);
  for (const e of topkIdx) if (e >= 0) rows[place.rankOf(e)]++;
  return rows;
}

/** Rows a rank's combineSend writes back to each home: what it received from the home's DP group. */
export function combineRows(config: Readonly<EpConfig>, sourceCounts: ArrayLike<number>): number[] {
  const R = config.ranks;
  const dp = config.dpSize;
  const bySource = rowsBySource(config, sourceCounts);
  return Array.from({ length: R }, (_, home) => {
    let n = 0;
    for (let s = Math.floor(home / dp) * dp; s < (Math.floor(home / dp) + 1) * dp; s++) n += bySource[s];
    return n;
  });
}

interface Entry extends StatsEntry {
  topkIdx: Int32Array | null;
  sourceCounts: Int32Array | null;
}

/**
 * `CudaSession.stats` bookkeeping, kept in the launcher's process so the counters outlive a failed
 * worker. Rows come from what the parent sees (the validated input, the dispatch result's counts,
 * which are the count signals dispatch recv read); with device stats on, the kernels' own counts
 * and wait stamps (read back by the worker after each receive) replace them.
 */
export class SessionStats {
  private readonly entries: Entry[];

  constructor(private readonly config: Readonly<EpConfig>) {
    this.entries = Array.from({ length: config.ranks }, () => ({
      step: 0,
      completed: null,
      traffic: [null, null, null, null],
      waits: [null, null],
      topkIdx: null,
      sourceCounts: null,
    }));
  }

  private traffic(e: Entry, call: number, rows: ArrayLike<number>): void {
    e.traffic[call] = peerTraffic(this.config, call < 2 ? "dispatch" : "combine", rows);
  }

  dispatchSend(rank: number, step: number, topkIdx: Int32Array): void {
    const e = this.entries[rank];
    e.step = step;
    e.completed = "dispatchSend";
    e.traffic = [null, null, null, null];
    e.waits = [null, null];
    e.topkIdx = topkIdx.slice();
    e.sourceCounts = null;
    this.traffic(e, 0, dispatchRows(this.config, rank, topkIdx));
  }

  dispatchRecv(rank: number, sourceCounts: Int32Array, device: EndpointStats | null): void {
    const e = this.entries[rank];
    e.completed = "dispatchRecv";
    e.sourceCounts = sourceCounts.slice();
    this.traffic(e, 1, rowsBySource(this.config, sourceCounts));
    if (device) {
      this.traffic(e, 0, device.dispatchSent);
      e.waits[0] = Object.freeze([...device.dispatchWaitMs]);
    }
  }

  combineSend(rank: number): void {
    const e = this.entries[rank];
    e.completed = "combineSend";
    const L = localExperts(this.config);
    this.traffic(e, 2, combineRows(this.config, e.sourceCounts ?? new Int32Array(L * this.config.ranks)));
  }

  combineRecv(rank: number, device: EndpointStats | null): void {
    const e = this.entries[rank];
    e.completed = "combineRecv";
    if (device) {
      this.traffic(e, 2, device.combineSent);
      this.traffic(e, 3, device.combineReceived);
      e.waits[1] = Object.freeze([...device.combineWaitMs]);
    } else {
      this.traffic(e, 3, combineExpected(this.config, e.topkIdx ?? new Int32Array(0)));
    }
  }

  get(rank: number): StepStats {
    return stepStatsOf(rank, this.entries[rank]);
  }
}
