import { computeLayout, type DispatchResult, type RankInput, type Session } from "@switchyard/core";
import type { ExpertFn } from "./experts.js";
import { modifiedInputs, snapshotInputs } from "./inputs.js";
import { ConformanceMismatch, errorMessage, errorName } from "./problems.js";
import { combineRecvWeights, dispatchInputOf } from "./weightsAt.js";

/** One call of a step: a phase on a rank. */
export interface Call {
  readonly op: "dispatchRecv" | "combineSend";
  readonly rank: number;
}

/**
 * The order a step's calls are made in, within the rules of core's `Session`: every rank's
 * dispatchSend (in `sends` order), then dispatchRecv / combineSend in `middle` order (each rank's
 * combineSend after its own dispatchRecv), then every combineRecv (in `recvs` order).
 * `concurrent` issues each of the three stages' calls without awaiting one before the next.
 */
export interface Schedule {
  readonly sends: readonly number[];
  readonly middle: readonly Call[];
  readonly recvs: readonly number[];
  readonly concurrent: boolean;
}

/** Rank order 0..R-1 for every stage: all receives, then all combine sends. */
export function canonicalSchedule(ranks: number): Schedule {
  const order = Array.from({ length: ranks }, (_, r) => r);
  return {
    sends: order,
    middle: [
      ...order.map((rank) => ({ op: "dispatchRecv" as const, rank })),
      ...order.map((rank) => ({ op: "combineSend" as const, rank })),
    ],
    recvs: order,
    concurrent: false,
  };
}

export interface StepOutcome {
  /** Per rank: what dispatchRecv returned. */
  dispatch: DispatchResult[];
  /** Per rank: what combineRecv returned. */
  y: Uint16Array[];
}

/** Calls a session method, turning a throw into a mismatch that says which call failed. */
async function call<T>(label: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const err = new ConformanceMismatch(`${label} threw ${errorName(e)}: ${errorMessage(e)}`);
    (err as Error & { cause?: unknown }).cause = e;
    throw err;
  }
}

/** Callbacks run just before a rank's call (sequential schedules only): where a test injects bad calls. */
export interface StepHooks {
  beforeSend?(rank: number): Promise<void>;
  beforeRecv?(rank: number): Promise<void>;
  beforeCombineSend?(rank: number, result: DispatchResult): Promise<void>;
  beforeCombineRecv?(rank: number): Promise<void>;
}

export interface StepOptions {
  schedule?: Schedule;
  /** Prefix of error messages, e.g. "step 3". */
  label?: string;
  hooks?: StepHooks;
}

/**
 * Runs one whole step on a session: dispatch, the experts (`experts` reads each rank's result),
 * combine. Also checks that the backend left the caller's input arrays unmodified. The weights go
 * to dispatchSend, or with `combineWeights` `home` to combineRecv (weightsAt.ts).
 */
export async function runStep(
  session: Session,
  inputs: RankInput[],
  experts: ExpertFn,
  options: StepOptions = {},
): Promise<StepOutcome> {
  const R = inputs.length;
  const schedule = options.schedule ?? canonicalSchedule(R);
  const label = options.label ?? "step";
  const hooks = options.hooks ?? {};
  const rows = computeLayout(session.config).rows;
  const snapshot = snapshotInputs(inputs);
  const dispatch = new Array<DispatchResult>(R);
  const y = new Array<Uint16Array>(R);
  const send = async (r: number) => {
    await hooks.beforeSend?.(r);
    await call(`${label}: rank ${r} dispatchSend`, () =>
      session.dispatchSend(r, dispatchInputOf(session.config, inputs[r])),
    );
  };
  const recv = async (r: number) => {
    await hooks.beforeRecv?.(r);
    dispatch[r] = await call(`${label}: rank ${r} dispatchRecv`, () => session.dispatchRecv(r));
  };
  const back = async (r: number) => {
    await hooks.beforeCombineSend?.(r, dispatch[r]);
    const out = experts(r, dispatch[r], rows);
    await call(`${label}: rank ${r} combineSend`, () => session.combineSend(r, out));
  };
  const finish = async (r: number) => {
    await hooks.beforeCombineRecv?.(r);
    y[r] = await call(`${label}: rank ${r} combineRecv`, () =>
      session.combineRecv(r, combineRecvWeights(session.config, inputs[r])),
    );
  };
  if (schedule.concurrent) {
    await Promise.all(schedule.sends.map(send));
    const started = new Set<number>();
    const chains: Promise<void>[] = [];
    for (const c of schedule.middle) {
      if (c.op !== "dispatchRecv" || started.has(c.rank)) continue;
      started.add(c.rank);
      chains.push(recv(c.rank).then(() => back(c.rank)));
    }
    await Promise.all(chains);
    await Promise.all(schedule.recvs.map(finish));
  } else {
    for (const r of schedule.sends) await send(r);
    for (const c of schedule.middle) await (c.op === "dispatchRecv" ? recv(c.rank) : back(c.rank));
    for (const r of schedule.recvs) await finish(r);
  }
  const modified = modifiedInputs(inputs, snapshot);
  if (modified.length > 0) {
    throw new ConformanceMismatch(
      `${label}: the backend modified the caller's inputs: ${modified.join(", ")}`,
    );
  }
  return { dispatch, y };
}
