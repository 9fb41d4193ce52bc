/**
 * A rank's worker process (one per GPU), started by the launcher with child_process.fork. It
 * answers requests one at a time, in order: bootstrap (uniqueId, init), session phases (open,
 * dispatchSend, dispatchRecv, combineSend, combineRecv, close), checks (graphStep, peerWrite,
 * baselineStep, memory, soakSetup / soakRun / soakClose), the bench (ncclUniqueId, ncclInit,
 * benchPoint, benchBaseline) and, with SWITCHYARD_TEST_HOOKS=1 only, the fault world's `hook`.
 * Errors travel back serialised with their class; nothing here exits except on `exit` or when the
 * launcher goes away.
 */
import type { DispatchInput, EpConfig } from "@switchyard/core";
import { CudaRuntime, type NativeRuntimeOptions, type OutputMode, requireNative } from "@switchyard/cuda";
import { runRankBaseline } from "../bench/rankBaseline.js";
import { type RankPointOptions, runRankPoint } from "../bench/rankPoint.js";
import { type BaselineStepOptions, runBaselineStep } from "../checks/baselineStep.js";
import { type GraphStepOptions, runGraphStep } from "../checks/graphStep.js";
import { SoakRank, type SoakSetup } from "../checks/soakRank.js";
import { NcclComm } from "../nccl.js";
import { serializeError } from "../workerErrors.js";
import { type FaultPlan, hooksEnabled, TestHooks } from "./hooks.js";
import type { WorkerRequest, WorkerResponse } from "./protocol.js";
import { RankState } from "./rankState.js";

let runtime: CudaRuntime | null = null;
let nccl: NcclComm | null = null;
const sessions = new Map<number, RankState>();
const soaks = new Map<number, SoakRank>();
const hooks = new TestHooks(Number(process.env.SWITCHYARD_RANK ?? -1), hooksEnabled());

function needRuntime(): CudaRuntime {
  if (runtime === null) throw new Error("worker: init has not run");
  return runtime;
}

function needNccl(): NcclComm {
  if (nccl === null) throw new Error("worker: ncclInit has not run");
  return nccl;
}

function session(id: number): RankState {
  const s = sessions.get(id);
  if (!s) throw new Error(`worker: no open session ${id}`);
  return s;
}

type Args = Record<string, unknown>;

const ops: Record<string, (a: Args) => unknown> = {
  ping: () => ({ pid: process.pid }),
  uniqueId: () => requireNative().getUniqueId(),
  init: (a) => {
    runtime ??= CudaRuntime.create({
      uniqueId: a.uniqueId as Uint8Array,
      rank: a.rank as number,
      ranks: a.ranks as number,
      device: a.device as number,
      native: (a.native ?? {}) as NativeRuntimeOptions,
    });
    const info = runtime.info();
    // The put transport reached the library: it stores to this PE only (every other one takes puts).
    if ((a.native as NativeRuntimeOptions | undefined)?.transport === "put" && info.directPeers !== 1) {
      throw new Error(`transport put asked for, but the runtime stores to ${info.directPeers} PEs`);
    }
    return info;
  },
  open: (a) => {
    const state = new RankState(
      needRuntime(),
      a.config as EpConfig,
      a.timeoutMs as number,
      a.stats === true,
      a.output as OutputMode | undefined,
    );
    sessions.set(a.session as number, state);
    return { symmetricBytes: state.endpoint.layout.symmetricBytes };
  },
  dispatchSend: async (a) => {
    const s = session(a.session as number);
    await hooks.fire("dispatchSend");
    s.dispatchSend(a.input as DispatchInput);
  },
  dispatchRecv: (a) => session(a.session as number).dispatchRecv(() => hooks.fire("dispatchRecv")),
  combineSend: async (a) => {
    const s = session(a.session as number);
    await hooks.fire("combineSend");
    s.combineSend(a.expertOut as Uint16Array);
  },
  combineRecv: (a) =>
    session(a.session as number).combineRecv(
      () => hooks.fire("combineRecv"),
      a.weights as Float32Array | undefined,
    ),
  hook: (a) => hooks.arm(a as unknown as FaultPlan),
  soakSetup: (a) => {
    soaks.set(a.id as number, new SoakRank(needRuntime(), a as unknown as SoakSetup));
  },
  soakRun: (a) => {
    const s = soaks.get(a.id as number);
    if (!s) throw new Error(`worker: no soak ${a.id}`);
    return s.run(a.from as number, a.to as number);
  },
  soakClose: (a) => {
    const s = soaks.get(a.id as number);
    soaks.delete(a.id as number);
    s?.close();
  },
  memory: () => {
    const gpu = requireNative().memInfo();
    const m = process.memoryUsage();
    return { gpuFree: gpu.free, gpuTotal: gpu.total, rss: m.rss, heapUsed: m.heapUsed, external: m.external };
  },
  close: (a) => {
    const s = sessions.get(a.session as number);
    sessions.delete(a.session as number);
    s?.close();
  },
  graphStep: (a) => runGraphStep(needRuntime(), a as unknown as GraphStepOptions),
  peerWrite: (a) => needRuntime().native.benchPeerWrite(a.bytes as number, a.iters as number),
  ncclUniqueId: () => requireNative().ncclUniqueId(),
  ncclInit: (a) => {
    const rt = needRuntime();
    nccl ??= NcclComm.create(rt.addon, a.uniqueId as Uint8Array, rt.rank, rt.ranks, rt.info().device);
    return nccl.version();
  },
  memInfo: () => requireNative().memInfo(),
  benchPoint: (a) => runRankPoint(needRuntime(), a as unknown as RankPointOptions),
  benchBaseline: (a) => runRankBaseline(needRuntime(), needNccl(), a as unknown as RankPointOptions),
  baselineStep: (a) => runBaselineStep(needRuntime(), needNccl(), a as unknown as BaselineStepOptions),
  exit: () => {
    setImmediate(() => process.exit(0));
  },
};

let queue: Promise<void> = Promise.resolve();

function answer(msg: WorkerResponse): void {
  process.send?.(msg);
}

process.on("message", (msg: WorkerRequest) => {
  queue = queue.then(async () => {
    const op = ops[msg.op];
    try {
      if (!op) throw new Error(`worker: unknown op ${msg.op}`);
      const value = await op((msg.args ?? {}) as Args);
      answer({ id: msg.id, ok: true, value: value ?? null });
    } catch (e) {
      answer({ id: msg.id, ok: false, error: serializeError(e) });
    }
  });
});

// The launcher went away: nothing is left to serve.
process.on("disconnect", () => process.exit(0));
