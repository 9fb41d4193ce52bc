import {
  blockPlacement,
  combineWeightsOf,
  type EpConfig,
  peerTraffic,
  rowsBySource,
  type StatsEntry,
  type StepStats,
  stepStatsOf,
} from "@switchyard/core";
import type { EndpointStats } from "@switchyard/cuda";

/** Ranks hosting token t's used slots (each once), for a [T, K] topkIdx. */
function ranksOf(config: Readonly<EpConfig>, topkIdx: Int32Array, t: number): Set<number> {
  const K = config.topK;
  const place = blockPlacement(config);
  const ranks = new Set<number>();
  for (let k = 0; k < K; k++) {
    const e = topkIdx[t * K + k];
    if (e >= 0) ranks.add(place.rankOf(e));
  }
  return ranks;
}

/**
 * Rows (route records, protocol version 2) rank `rank`'s dispatchSend writes to each destination:
 * one per token of its DP group it owns (t % dpSize == rank % dpSize) and rank its slots name.
 */
export function dispatchRows(config: Readonly<EpConfig>, rank: number, topkIdx: Int32Array): number[] {
  const dp = config.dpSize;
  const rows = new Array<number>(config.ranks).fill(0);
  for (let t = 0; t < topkIdx.length / config.topK; t++) {
    if (t % dp !== rank % dp) continue;
    for (const r of ranksOf(config, topkIdx, t)) rows[r]++;
  }
  return rows;
}

/** Partials each expert rank announces to a rank at combineRecv: one per token of its batch routed there. */
export function combineExpected(config: Readonly<EpConfig>, topkIdx: Int32Array): number[] {
  const rows = new Array<number>(config.ranks).fill(0);
  for (let t = 0; t < topkIdx.length / config.topK; t++)
    for (const r of ranksOf(config, topkIdx, t)) rows[r]++;
  return rows;
}

/**
 * Weights at home: the (token, slot) rows each expert rank sends a rank, one per used slot of its
 * batch's tokens on that rank.
 */
export function homeRowsExpected(config: Readonly<EpConfig>, topkIdx: Int32Array): number[] {
  const place = blockPlacement(config);
  const rows = new Array<number>(config.ranks).fill(0);
  for (const e of topkIdx) if (e >= 0) rows[place.rankOf(e)]++;
  return rows;
}

/**
 * Partials a rank's combineSend writes to each home: the records it received from the home's DP
 * group (`records[s]`, from source s); with weights at home the entries (`records` then holds the
 * rows received from each source).
 */
export function combineRows(config: Readonly<EpConfig>, records: ArrayLike<number>): number[] {
  const R = config.ranks;
  const dp = config.dpSize;
  return Array.from({ length: R }, (_, home) => {
    let n = 0;
    for (let s = Math.floor(home / dp) * dp; s < (Math.floor(home / dp) + 1) * dp; s++) n += records[s] ?? 0;
    return n;
  });
}

interface Entry extends StatsEntry {
  topkIdx: Int32Array | null;
  /** Route records received from each source in the latest dispatchRecv. */
  records: number[] | null;
  /** Rows (entries) received from each source in the latest dispatchRecv. */
  entries: number[] | null;
}

/**
 * `CudaSession.stats` bookkeeping, kept in the launcher's process so the counters outlive a failed
 * worker. Rows are route records (dispatch) and partials (combine), protocol version 2. They come
 * from what the parent sees (the validated input; without device stats, received records are
 * estimated from the dispatch result's rows); with device stats on (every cudaBackend session),
 * the kernels' own counts and wait stamps (read back by the worker after each receive) replace them.
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
      records: null,
      entries: null,
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
    e.records = null;
    this.traffic(e, 0, dispatchRows(this.config, rank, topkIdx));
  }

  /**
   * Records `rank` received from each source this step, from the sources' own inputs (this process
   * saw every rank's dispatchSend); rows per source when a source's input is not known.
   */
  private recordsFrom(rank: number, sourceCounts: Int32Array): number[] {
    const rows = rowsBySource(this.config, sourceCounts);
    return this.entries.map((src, s) => {
      const idx = src.topkIdx;
      return idx ? dispatchRows(this.config, s, idx)[rank] : rows[s];
    });
  }

  dispatchRecv(rank: number, sourceCounts: Int32Array, device: EndpointStats | null): void {
    const e = this.entries[rank];
    e.completed = "dispatchRecv";
    e.records = device ? [...device.dispatchReceived] : this.recordsFrom(rank, sourceCounts);
    e.entries = [...rowsBySource(this.config, sourceCounts)];
    this.traffic(e, 1, e.records);
    if (device) {
      this.traffic(e, 0, device.dispatchSent);
      e.waits[0] = Object.freeze([...device.dispatchWaitMs]);
    }
  }

  /** Weights at home: combine moves a row per (token, slot); the kernels count tokens, so the rows come from the inputs. */
  private get home(): boolean {
    return combineWeightsOf(this.config) === "home";
  }

  combineSend(rank: number): void {
    const e = this.entries[rank];
    e.completed = "combineSend";
    this.traffic(e, 2, combineRows(this.config, (this.home ? e.entries : e.records) ?? []));
  }

  combineRecv(rank: number, device: EndpointStats | null): void {
    const e = this.entries[rank];
    e.completed = "combineRecv";
    if (device && this.home) {
      this.traffic(e, 3, homeRowsExpected(this.config, e.topkIdx ?? new Int32Array(0)));
      e.waits[1] = Object.freeze([...device.combineWaitMs]);
    } else if (device) {
      this.traffic(e, 2, device.combineSent);
      this.traffic(e, 3, device.combineReceived);
      e.waits[1] = Object.freeze([...device.combineWaitMs]);
    } else {
      const expected = this.home ? homeRowsExpected : combineExpected;
      this.traffic(e, 3, expected(this.config, e.topkIdx ?? new Int32Array(0)));
    }
  }

  get(rank: number): StepStats {
    return stepStatsOf(rank, this.entries[rank]);
  }
}
