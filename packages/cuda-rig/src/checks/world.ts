import type { DispatchResult, EpConfig, RankInput, Session } from "@switchyard/core";
import type { WorkerGroup } from "../launcher.js";
import type { WithStats } from "../worker/rankState.js";
import { compareDispatchAny, expertOutputsAny } from "./contiguous.js";
import { compareY, makeInputs, referenceY } from "./step.js";

/**
 * A test world driven at the worker level (the same requests a CudaSession forwards), so a check
 * can keep calling the ranks that are still alive after one of them died or stalled.
 */
export class World {
  private constructor(
    readonly group: WorkerGroup,
    readonly config: EpConfig,
    readonly session: number,
    readonly ipcTimeoutMs: number,
  ) {}

  static async open(group: WorkerGroup, config: EpConfig, timeoutMs: number, session = 1): Promise<World> {
    const ipc = timeoutMs + 30_000;
    await group.all("open", () => ({ session, config, timeoutMs, stats: false }), ipc + 60_000);
    return new World(group, config, session, ipc);
  }

  private call<T>(rank: number, op: string, args: Record<string, unknown> = {}): Promise<T> {
    return this.group.call<T>(rank, op, { session: this.session, ...args }, this.ipcTimeoutMs);
  }

  dispatchSend(rank: number, input: RankInput): Promise<void> {
    return this.call(rank, "dispatchSend", { input });
  }

  async dispatchRecv(rank: number): Promise<DispatchResult> {
    return (await this.call<WithStats<DispatchResult>>(rank, "dispatchRecv")).value;
  }

  combineSend(rank: number, expertOut: Uint16Array): Promise<void> {
    return this.call(rank, "combineSend", { expertOut });
  }

  async combineRecv(rank: number): Promise<Uint16Array> {
    return (await this.call<WithStats<Uint16Array>>(rank, "combineRecv")).value;
  }
}

/** The four calls of a session or a world, by rank. */
export interface StepDriver {
  dispatchSend(rank: number, input: RankInput): Promise<void>;
  dispatchRecv(rank: number): Promise<DispatchResult>;
  combineSend(rank: number, expertOut: Uint16Array): Promise<void>;
  combineRecv(rank: number): Promise<Uint16Array>;
}

/**
 * One whole step on every rank (phase by phase, ranks concurrently) with the inputs of `seed`
 * (`tokens` per DP group, default the maximum); with `verify`, each rank's dispatch result and y
 * are compared bit for bit with core's reference. Returns the differences (empty: all equal).
 */
export async function checkedStep(
  driver: StepDriver | Session,
  config: EpConfig,
  seed: number,
  o: { tokens?: number; verify?: boolean } = {},
): Promise<string[]> {
  const ranks = Array.from({ length: config.ranks }, (_, r) => r);
  const inputs = makeInputs(config, o.tokens ?? config.maxTokensPerRank, seed);
  const verify = o.verify ?? true;
  await Promise.all(ranks.map((r) => driver.dispatchSend(r, inputs[r])));
  const results = await Promise.all(ranks.map((r) => driver.dispatchRecv(r)));
  const errors: string[] = [];
  if (verify) for (const r of ranks) errors.push(...compareDispatchAny(config, inputs, r, results[r]));
  await Promise.all(ranks.map((r) => driver.combineSend(r, expertOutputsAny(config, r, results[r]))));
  const ys = await Promise.all(ranks.map((r) => driver.combineRecv(r)));
  if (verify) for (const r of ranks) errors.push(...compareY(r, ys[r], referenceY(config, inputs, r)));
  return errors;
}
