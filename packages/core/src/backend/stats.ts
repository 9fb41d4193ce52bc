import { type EpConfig, localExperts, scalesPerRow } from "../config.js";
import { dtypeBytes } from "../dtype.js";
import { routeWordsOf } from "../layout/symbols.js";
import type { Phase } from "./phases.js";

/** The four calls of a step, in order; `StepStats.completed` names the last one a rank finished. */
export type StepCall = "dispatchSend" | "dispatchRecv" | "combineSend" | "combineRecv";

export const STEP_CALLS: readonly StepCall[] = ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv"];

/** Rows and bytes one rank exchanged with each peer in one phase. Index = peer rank (this rank included). */
export interface PeerTraffic {
  /**
   * [R] rows per peer: route records (one per token and rank) for dispatch; for combine partials
   * (one per token and expert rank), or with `combineWeights` `home` one row per (token, slot).
   */
  readonly rows: readonly number[];
  /** [R] bytes per peer: rows[p] * `rowBytes(config, phase)`. Signal words are not counted. */
  readonly bytes: readonly number[];
}

/**
 * A rank's counters for its latest step: the step in progress, or the last one it completed.
 * Each phase's counters appear when that call completes on this rank and stay until the rank's
 * next dispatchSend starts a new step; a refused or failed call changes nothing.
 *
 * To find a slow rank: every other rank's `dispatchWaitMs` / `combineWaitMs` is largest for it.
 * To find a missing one: the receive fails with `TimeoutError` / `ProtocolError` naming it, and the
 * ranks that did complete show which peers they exchanged rows with.
 */
export interface StepStats {
  readonly rank: number;
  /** The step (from 0 per session) the counters describe. */
  readonly step: number;
  /** The last call of that step that completed on this rank; null before the first. */
  readonly completed: StepCall | null;
  /** Records this rank's dispatchSend wrote to each destination (tokens it owns, once per rank they route to). */
  readonly dispatchSent: PeerTraffic | null;
  /** Records each source delivered to this rank, as its signals announced. */
  readonly dispatchReceived: PeerTraffic | null;
  /** Partials (home weights: (token, slot) rows) this rank's combineSend wrote to each home rank (every rank of a DP group). */
  readonly combineSent: PeerTraffic | null;
  /** Partials each expert rank announced to this rank at combineRecv (home weights: the (token, slot) rows it sent). */
  readonly combineReceived: PeerTraffic | null;
  /**
   * [R] milliseconds dispatchRecv waited for each source's signals (from the call's start to the
   * arrival of the peer's last signal). null where the backend does not wait: core's reference and
   * the WebGPU simulation check each signal once, when the receive runs, so a missing one is a
   * ProtocolError at once and there is no waiting to measure.
   */
  readonly dispatchWaitMs: readonly number[] | null;
  /** [R] the same for combineRecv and each expert rank's signal; null where the backend does not wait. */
  readonly combineWaitMs: readonly number[] | null;
}

/**
 * Bytes one row moves, as `PeerTraffic.bytes` counts them (docs/protocol.md).
 * - dispatch: one route record: the payload (hidden * dispatch dtype bytes), its fp32 block scales
 *   (fp8: hidden / 128 of them) and its W = 2 + 4 * min(topK, localExperts) i32 words: H * b + 4 * S + 4 * W;
 * - combine: one bf16 row, 2 * H: a partial, or with `combineWeights` `home` one slot's output.
 */
export function rowBytes(config: EpConfig, phase: "dispatch" | "combine"): number {
  if (phase === "combine") return 2 * config.hidden;
  const d = config.dispatchDtype;
  const W = routeWordsOf(Math.min(config.topK, localExperts(config)));
  return config.hidden * dtypeBytes(d) + 4 * scalesPerRow(config, d) + 4 * W;
}

/** Traffic of one phase from rows per peer. */
export function peerTraffic(
  config: EpConfig,
  phase: "dispatch" | "combine",
  rows: ArrayLike<number>,
): PeerTraffic {
  const per = rowBytes(config, phase);
  const r = Object.freeze(Array.from(rows));
  return Object.freeze({ rows: r, bytes: Object.freeze(r.map((n) => n * per)) });
}

/**
 * Which step and call a rank's latest counters belong to, from its phase and step number (as
 * `PhaseTracker` keeps them): a rank back in `idle` has completed the previous step.
 */
export function statsPosition(phase: Phase, step: number): { step: number; completed: StepCall | null } {
  switch (phase) {
    case "idle":
      return step === 0 ? { step: 0, completed: null } : { step: step - 1, completed: "combineRecv" };
    case "dispatchSent":
      return { step, completed: "dispatchSend" };
    case "dispatched":
      return { step, completed: "dispatchRecv" };
    case "combineSent":
      return { step, completed: "combineSend" };
  }
}

/** A rank's counters as a backend keeps them: traffic in `STEP_CALLS` order, waits (dispatch, combine). */
export interface StatsEntry {
  step: number;
  completed: StepCall | null;
  traffic: (PeerTraffic | null)[];
  waits: [readonly number[] | null, readonly number[] | null];
}

/** The frozen `StepStats` of a rank's entry. */
export function stepStatsOf(rank: number, e: StatsEntry): StepStats {
  return Object.freeze({
    rank,
    step: e.step,
    completed: e.completed,
    dispatchSent: e.traffic[0],
    dispatchReceived: e.traffic[1],
    combineSent: e.traffic[2],
    combineReceived: e.traffic[3],
    dispatchWaitMs: e.waits[0],
    combineWaitMs: e.waits[1],
  });
}

/**
 * Bookkeeping for `Session.stats`: a backend records each call's rows per peer when the call
 * completes; `get` returns the rank's latest counters. `dispatchSend` starts a new step.
 */
export class StatsRecorder {
  private readonly entries: StatsEntry[];

  constructor(private readonly config: Readonly<EpConfig>) {
    this.entries = Array.from({ length: config.ranks }, () => ({
      step: 0,
      completed: null,
      traffic: [null, null, null, null],
      waits: [null, null],
    }));
  }

  /**
   * Records that `call` completed on `rank` in `step`, moving `rows[p]` rows with each peer p;
   * `waitMs` (receives only) is the time waited per peer, or null where nothing waits.
   */
  record(
    rank: number,
    step: number,
    call: StepCall,
    rows: ArrayLike<number>,
    waitMs: ArrayLike<number> | null = null,
  ): void {
    const e = this.entries[rank];
    if (call === "dispatchSend") {
      e.traffic = [null, null, null, null];
      e.waits = [null, null];
    }
    const i = STEP_CALLS.indexOf(call);
    e.step = step;
    e.completed = call;
    e.traffic[i] = peerTraffic(this.config, i < 2 ? "dispatch" : "combine", rows);
    if (call === "dispatchRecv" || call === "combineRecv")
      e.waits[i === 1 ? 0 : 1] = waitMs === null ? null : Object.freeze(Array.from(waitMs));
  }

  get(rank: number): StepStats {
    return stepStatsOf(rank, this.entries[rank]);
  }
}

/** Rows per source from a dispatch result's `sourceCounts [L, R]`. */
export function rowsBySource(config: EpConfig, sourceCounts: ArrayLike<number>): number[] {
  const R = config.ranks;
  const out = new Array<number>(R).fill(0);
  for (let i = 0; i < sourceCounts.length; i++) out[i % R] += sourceCounts[i];
  return out;
}
