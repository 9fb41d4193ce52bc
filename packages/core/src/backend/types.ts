import type { ScaleFormat } from "../codec/scaleFormat.js";
import type { CombineWeights } from "../combineWeights.js";
import type { EpConfig, LayoutKind } from "../config.js";
import type { Dtype } from "../dtype.js";
import type { Layout } from "../layout/layout.js";
import type { DispatchInput, DispatchResult } from "../tensors.js";
import type { StepStats } from "./stats.js";

/** What a backend supports. The conformance suite skips (with the reason) what is not declared. */
export interface Capabilities {
  layouts: readonly LayoutKind[];
  /** Input dtypes accepted by dispatch. */
  inputDtypes: readonly Dtype[];
  /** Dtypes dispatch can deliver (fp8 with bf16 input means quantise-on-dispatch). */
  dispatchDtypes: readonly Dtype[];
  maxRanks: number;
  maxHidden: number;
  maxTopK: number;
  /** hidden must be a multiple of this (1 = any). */
  hiddenMultiple: number;
  dpGroups: boolean;
  /** Rows within each (expert, source) region come in ascending source-token order. */
  deterministicRowOrder: boolean;
  /** Sessions implement `stats(rank)` (per-peer counters); the suite checks them (`session/stats`). */
  stats?: boolean;
  /**
   * fp8 scale formats (`EpConfig.scaleFormat`) the backend quantises and accepts; left out means
   * `["pow2"]` only. A config with a format not listed is refused with `UnsupportedError`.
   */
  scaleFormats?: readonly ScaleFormat[];
  /**
   * Combine-weights modes (`EpConfig.combineWeights`) the backend runs; left out means
   * `["expert"]` only. A config with a mode not listed is refused with `UnsupportedError`.
   */
  combineWeights?: readonly CombineWeights[];
}

export interface SessionOptions {
  /** Every cross-rank wait fails with `TimeoutError` after this long. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * A world-level session: all ranks of one config, driven phase by phase and rank by rank, so a
 * caller (the conformance suite) can interleave ranks. Within one step:
 * every rank's `dispatchSend` comes before any rank's `dispatchRecv`; a rank's `combineSend`
 * comes after its own `dispatchRecv`; every rank's `combineSend` comes before any `combineRecv`.
 * Any other order that keeps those rules is allowed and must give the same result.
 *
 * Bad input is refused with a named error before anything moves; the session stays usable.
 */
export interface Session {
  readonly config: Readonly<EpConfig>;
  readonly layout: Layout;
  /**
   * Sends this rank's tokens; never waits for other ranks. `input.topkWeights` is required with
   * `combineWeights` `expert` and refused (`InputError`) with `home`.
   */
  dispatchSend(rank: number, input: DispatchInput): Promise<void>;
  /** Waits for every source's rows and returns what this rank's experts received. */
  dispatchRecv(rank: number): Promise<DispatchResult>;
  /** Sends expert outputs back: bf16 bits [rows, hidden] aligned with the dispatch result's rows. */
  combineSend(rank: number, expertOut: Uint16Array): Promise<void>;
  /**
   * Waits for every expert rank's rows and returns y [T, hidden] bf16 bits for this rank's tokens.
   * `topkWeights` fp32 [T, topK] (this rank's tokens' router weights) is required with
   * `combineWeights` `home`, where the home applies them, and refused (`InputError`) with `expert`.
   */
  combineRecv(rank: number, topkWeights?: Float32Array): Promise<Uint16Array>;
  /**
   * Optional: this rank's counters for its latest step (rows and bytes per peer of each completed
   * call, time waited per peer where the backend waits), so a slow or missing rank can be found.
   * Moves nothing; refuses a bad rank with `InputError` and a destroyed session with `DestroyedError`.
   * A backend that implements it declares `capabilities.stats`.
   */
  stats?(rank: number): Promise<StepStats>;
  /** Frees everything; any later call throws `DestroyedError`. */
  destroy(): Promise<void>;
}

export interface Backend {
  readonly name: string;
  readonly capabilities: Capabilities;
  /** null when the backend can run here, else why not and what to do. */
  unavailableReason(): Promise<string | null>;
  /** Creates a world session. Throws `ConfigError` or `UnsupportedError` for configs it cannot run. */
  createSession(config: EpConfig, options?: SessionOptions): Promise<Session>;
}
