import { type ChildProcess, fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { devicesFor, type NativeRuntimeOptions } from "@switchyard/cuda";
import { MULTICAST_OFF_ENV, type WorkerRequest, type WorkerResponse } from "./worker/protocol.js";
import { deserializeError, WorkerExitError, WorkerTimeoutError } from "./workerErrors.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * How a command's workers are started: ranks per GPU and the library's runtime options, always
 * passed explicitly. The rig's command line (cli.ts) builds one from its environment and hands it
 * to every runner it dispatches to, which passes it on to `WorkerGroup.launch` (or `cudaBackend`).
 * Fields not given mean one rank per GPU and the library's runtime defaults.
 */
export interface WorkerSetup {
  /**
   * Ranks (NVSHMEM PEs) sharing one GPU when `devices` is not given: default 1. Several ranks on
   * one GPU is a mode you choose: two PEs share it by time slices, four or more should run under
   * an MPS daemon (`nvidia-cuda-mps-control -d` first), whose clients run at once. README "Several
   * ranks on one GPU".
   */
  ranksPerGpu?: number;
  /** The library's runtime options every worker's CudaRuntime is created with; default the library's defaults. */
  native?: NativeRuntimeOptions;
}

/** The compiled worker entry (dist/worker/main.js). */
export const DEFAULT_WORKER = join(here, "worker", "main.js");

export interface LaunchOptions extends WorkerSetup {
  /** World size: one worker process per rank. */
  ranks: number;
  /**
   * CUDA device of each rank. Default: rank / ranksPerGpu, rounded down (one rank per GPU unless
   * several ranks per GPU were asked for).
   */
  devices?: number[];
  /** Extra environment for every worker (NVLink multicast is forced off regardless). */
  env?: Record<string, string>;
  /** Worker script (tests pass a stand-in). */
  workerPath?: string;
  /** Bound on bootstrapping (unique id + NVSHMEM init), default 120 s. */
  initTimeoutMs?: number;
  /**
   * A worker's exit fails the whole group (default): every pending and later call rejects at once.
   * false keeps the other workers serving (the rank-failure world watches them time out on the
   * device): only the dead worker's calls reject, with its exit reason (`exitOf`).
   */
  failFast?: boolean;
}

interface Pending {
  rank: number;
  op: string;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** The environment of rank `rank`'s worker. */
export function workerEnv(
  base: NodeJS.ProcessEnv,
  rank: number,
  ranks: number,
  device: number,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    ...base,
    ...extra,
    ...MULTICAST_OFF_ENV,
    SWITCHYARD_RANK: String(rank),
    SWITCHYARD_WORLD_SIZE: String(ranks),
    SWITCHYARD_DEVICE: String(device),
  };
}

/**
 * One Node worker process per GPU, bootstrapped into one NVSHMEM world: rank 0's worker makes
 * the unique id, the launcher relays it, every worker initialises with it. Every request has a
 * timeout; a worker that exits fails the whole group (every pending and later request rejects
 * with WorkerExitError naming the rank and its exit code or signal), never a hang.
 */
export class WorkerGroup {
  readonly ranks: number;
  private readonly children: ChildProcess[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failureError: Error | null = null;
  private closing = false;
  private readonly failureListeners: ((e: Error) => void)[] = [];
  private readonly exits: (WorkerExitError | null)[];
  /** Runtime info each rank reported after init. */
  info: unknown[] = [];

  private constructor(
    ranks: number,
    private readonly failFast: boolean,
  ) {
    this.ranks = ranks;
    this.exits = new Array(ranks).fill(null);
  }

  /** Spawns the workers and bootstraps NVSHMEM by unique id. */
  static async launch(o: LaunchOptions): Promise<WorkerGroup> {
    const g = new WorkerGroup(o.ranks, o.failFast ?? true);
    const path = o.workerPath ?? DEFAULT_WORKER;
    const devices = o.devices ?? devicesFor(o.ranks, o.ranksPerGpu ?? 1);
    for (let rank = 0; rank < o.ranks; rank++) {
      const device = devices[rank] ?? rank;
      const child = fork(path, [], {
        serialization: "advanced",
        env: workerEnv(process.env, rank, o.ranks, device, o.env),
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      g.children.push(child);
      child.on("message", (m: WorkerResponse) => g.onMessage(m));
      child.on("exit", (code, signal) => g.onExit(rank, code, signal));
      child.on("error", (err) => g.fail(new WorkerExitError(rank, null, null, err.message)));
    }
    const timeout = o.initTimeoutMs ?? 120_000;
    const native = o.native ?? {};
    try {
      const uniqueId = await g.call<Uint8Array>(0, "uniqueId", {}, timeout);
      g.info = await g.all(
        "init",
        (rank) => ({ uniqueId, rank, ranks: o.ranks, device: devices[rank] ?? rank, native }),
        timeout,
      );
    } catch (e) {
      await g.close();
      throw e;
    }
    return g;
  }

  /** The error that failed the group, or null while it is healthy. */
  get failure(): Error | null {
    return this.failureError;
  }

  onFailure(listener: (e: Error) => void): void {
    this.failureListeners.push(listener);
  }

  private onMessage(m: WorkerResponse): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.ok) p.resolve(m.value);
    else p.reject(deserializeError(m.error));
  }

  /** Why rank `rank`'s worker exited (code or signal, and the request it was answering), or null. */
  exitOf(rank: number): WorkerExitError | null {
    return this.exits[rank] ?? null;
  }

  private onExit(rank: number, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closing) return;
    const ops = [...this.pending.values()].filter((p) => p.rank === rank).map((p) => p.op);
    const e = new WorkerExitError(rank, code, signal, ops.length ? `while answering ${ops.join(", ")}` : "");
    this.exits[rank] = e;
    if (this.failFast) {
      this.fail(e);
      return;
    }
    for (const [id, p] of this.pending) {
      if (p.rank !== rank) continue;
      clearTimeout(p.timer);
      p.reject(e);
      this.pending.delete(id);
    }
  }

  /** Fails the group: rejects everything pending; later calls reject with the same error. */
  fail(e: Error): void {
    if (this.failureError) return;
    this.failureError = e;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(e);
      this.pending.delete(id);
    }
    for (const l of this.failureListeners) l(e);
  }

  /** Sends `op` to rank `rank`'s worker; rejects after `timeoutMs` (which also fails the group). */
  call<T>(rank: number, op: string, args: unknown, timeoutMs: number): Promise<T> {
    if (this.failureError) return Promise.reject(this.failureError);
    const exited = this.exits[rank];
    if (exited) return Promise.reject(exited);
    const child = this.children[rank];
    if (!child?.connected)
      return Promise.reject(new WorkerExitError(rank, child?.exitCode ?? null, null, "not connected"));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const err = new WorkerTimeoutError(rank, op, timeoutMs);
        reject(err);
        if (this.failFast) this.fail(err);
      }, timeoutMs);
      this.pending.set(id, { rank, op, resolve: resolve as (v: unknown) => void, reject, timer });
      const req: WorkerRequest = { id, op, args };
      child.send(req, (err) => {
        if (err) {
          clearTimeout(timer);
          this.pending.delete(id);
          reject(new WorkerExitError(rank, child.exitCode, null, `send failed: ${err.message}`));
        }
      });
    });
  }

  /** `op` on every rank at once (collective operations). */
  all<T>(op: string, args: (rank: number) => unknown, timeoutMs: number): Promise<T[]> {
    return Promise.all(Array.from({ length: this.ranks }, (_, r) => this.call<T>(r, op, args(r), timeoutMs)));
  }

  /** Keeps (or stops keeping) the parent's event loop alive for these workers. */
  ref(keep: boolean): void {
    for (const c of this.children) {
      if (keep) {
        c.ref();
        (c as unknown as { channel?: { ref(): void } }).channel?.ref();
      } else {
        c.unref();
        (c as unknown as { channel?: { unref(): void } }).channel?.unref();
      }
    }
  }

  /** Stops every worker: asks it to exit, kills it after `graceMs`. */
  async close(graceMs = 3000): Promise<void> {
    this.closing = true;
    this.fail(new WorkerExitError(-1, null, null, "the worker group was closed"));
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const timer = setTimeout(() => c.kill("SIGKILL"), graceMs);
            c.once("exit", () => {
              clearTimeout(timer);
              resolve();
            });
            if (c.connected) c.send({ id: 0, op: "exit" }, () => {});
            else c.kill("SIGTERM");
          }),
      ),
    );
  }
}
