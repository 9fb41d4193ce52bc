import type { EpConfig } from "@switchyard/core";
import { runBounded } from "./blockingWatchdog.js";
import { shareUniqueId } from "./bootstrap.js";
import { RankEndpoint } from "./endpoint.js";
import { ranksPerGpu } from "./gpus.js";
import { jobSecretFromEnv, SECRET_SOURCES } from "./launchSecret.js";
import { CudaRuntime, getUniqueId, UNIQUE_ID_BYTES } from "./runtime.js";
import { runtimeOptionsFromEnv } from "./runtimeEnv.js";

/** The rendezvous port when neither SWITCHYARD_RENDEZVOUS_PORT nor MASTER_PORT is set. */
export const DEFAULT_RENDEZVOUS_PORT = 29517;
/** Without SWITCHYARD_RENDEZVOUS_PORT the rendezvous listens on MASTER_PORT + this (torchrun's store holds MASTER_PORT itself). */
export const MASTER_PORT_OFFSET = 17;

/** Where a rank is, read from the launcher's environment. */
export interface LaunchEnv {
  rank: number;
  worldSize: number;
  localRank: number;
  /** Rank 0's rendezvous address: rank 0 listens on it (only), the others connect to it. */
  masterAddr: string;
  /** The port rank 0 serves the unique id on. */
  port: number;
  source: "torchrun" | "slurm" | "mpi";
  /** The per-job secret of the rendezvous (null only in a world of one rank, which needs none). */
  secret: Uint8Array | null;
  /** The variable the secret came from. */
  secretSource: string | null;
}

function int(env: NodeJS.ProcessEnv, name: string): number {
  const v = env[name];
  const n = Number(v);
  if (v === undefined || v.trim() === "" || !Number.isInteger(n) || n < 0) {
    throw new Error(`launch environment: ${name}=${JSON.stringify(v)} is not a non-negative integer`);
  }
  return n;
}

/**
 * Reads rank, world size and local rank from torchrun (RANK, WORLD_SIZE, LOCAL_RANK), Slurm
 * (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) or Open MPI (OMPI_COMM_WORLD_RANK / _SIZE /
 * _LOCAL_RANK), first match wins. Rank 0's rendezvous address is SWITCHYARD_RENDEZVOUS_ADDR, else
 * MASTER_ADDR (Slurm: else SLURM_LAUNCH_NODE_IPADDR; default 127.0.0.1 for a single host); the
 * port is SWITCHYARD_RENDEZVOUS_PORT, else MASTER_PORT + 17, else 29517 (never MASTER_PORT itself:
 * torchrun's store listens there). The job secret comes from the first of SWITCHYARD_JOB_SECRET,
 * TORCHELASTIC_RUN_ID, SLURM_JOB_ID (with SLURM_STEP_ID), PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid.
 */
export function parseLaunchEnv(env: NodeJS.ProcessEnv = process.env): LaunchEnv {
  let rank: number;
  let worldSize: number;
  let localRank: number;
  let source: LaunchEnv["source"];
  if (env.RANK !== undefined && env.WORLD_SIZE !== undefined) {
    source = "torchrun";
    rank = int(env, "RANK");
    worldSize = int(env, "WORLD_SIZE");
    localRank = env.LOCAL_RANK !== undefined ? int(env, "LOCAL_RANK") : rank;
  } else if (env.SLURM_PROCID !== undefined && env.SLURM_NTASKS !== undefined) {
    source = "slurm";
    rank = int(env, "SLURM_PROCID");
    worldSize = int(env, "SLURM_NTASKS");
    localRank = env.SLURM_LOCALID !== undefined ? int(env, "SLURM_LOCALID") : rank;
  } else if (env.OMPI_COMM_WORLD_RANK !== undefined && env.OMPI_COMM_WORLD_SIZE !== undefined) {
    source = "mpi";
    rank = int(env, "OMPI_COMM_WORLD_RANK");
    worldSize = int(env, "OMPI_COMM_WORLD_SIZE");
    localRank = env.OMPI_COMM_WORLD_LOCAL_RANK !== undefined ? int(env, "OMPI_COMM_WORLD_LOCAL_RANK") : rank;
  } else {
    throw new Error(
      "launch environment: no rank found; set RANK and WORLD_SIZE (torchrun), run under srun (SLURM_PROCID, SLURM_NTASKS) or mpirun (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)",
    );
  }
  if (worldSize < 1 || rank >= worldSize) {
    throw new Error(`launch environment: rank ${rank} is outside a world of ${worldSize}`);
  }
  const masterAddr =
    env.SWITCHYARD_RENDEZVOUS_ADDR ??
    env.MASTER_ADDR ??
    (source === "slurm" ? env.SLURM_LAUNCH_NODE_IPADDR : undefined) ??
    "127.0.0.1";
  let port = DEFAULT_RENDEZVOUS_PORT;
  let portVar = "default";
  if (env.SWITCHYARD_RENDEZVOUS_PORT !== undefined) {
    portVar = "SWITCHYARD_RENDEZVOUS_PORT";
    port = int(env, portVar);
  } else if (env.MASTER_PORT !== undefined) {
    portVar = `MASTER_PORT + ${MASTER_PORT_OFFSET}`;
    port = int(env, "MASTER_PORT") + MASTER_PORT_OFFSET;
  }
  if (port < 1 || port > 65535)
    throw new Error(
      `launch environment: the rendezvous port (${portVar}) = ${port} is not a TCP port; set SWITCHYARD_RENDEZVOUS_PORT`,
    );
  const found = jobSecretFromEnv(env);
  if (!found && worldSize > 1) {
    throw new Error(
      `launch environment: no job secret for the rendezvous of ${worldSize} ranks; set SWITCHYARD_JOB_SECRET ` +
        `to the same random value on every rank (or run under a launcher that sets one of ${SECRET_SOURCES.slice(1).join(", ")})`,
    );
  }
  return {
    rank,
    worldSize,
    localRank,
    masterAddr,
    port,
    source,
    secret: found?.secret ?? null,
    secretSource: found?.source ?? null,
  };
}

export interface EnvStartOptions {
  /** Bound on the unique-id rendezvous (default 120 s). */
  timeoutMs?: number;
  /** Bound on one connection attempt of a peer (default 10 s). */
  attemptMs?: number;
  /**
   * Bound on each collective that blocks the JavaScript thread (NVSHMEM init, the endpoint's
   * symmetric allocation), default 300 s: past it the process is killed (see blockingWatchdog.ts).
   */
  collectiveTimeoutMs?: number;
  /** Receive-stage timeout of the endpoint. */
  stepTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** The default of `collectiveTimeoutMs`. */
export const DEFAULT_COLLECTIVE_TIMEOUT_MS = 300_000;

/**
 * The environment-driven start with the collective part given: reads the launch environment,
 * shares the unique id (`makeId` on rank 0), and only then runs `join` (collective, may block the
 * thread) under the collective timeout. startFromEnv is this with NVSHMEM; tests pass stand-ins.
 */
export async function startRankFromEnv<T>(
  o: EnvStartOptions,
  makeId: () => Uint8Array,
  join: (uniqueId: Uint8Array, env: LaunchEnv, bounded: <U>(what: string, fn: () => U) => U) => T,
): Promise<{ env: LaunchEnv; value: T }> {
  const env = parseLaunchEnv(o.env);
  const uniqueId = await shareUniqueId(
    {
      rank: env.rank,
      worldSize: env.worldSize,
      addr: env.masterAddr,
      port: env.port,
      secret: env.secret ?? new Uint8Array(1),
    },
    makeId,
    { timeoutMs: o.timeoutMs ?? 120_000, attemptMs: o.attemptMs, bytes: UNIQUE_ID_BYTES },
  );
  const ms = o.collectiveTimeoutMs ?? DEFAULT_COLLECTIVE_TIMEOUT_MS;
  const bounded = <U>(what: string, fn: () => U): U => runBounded(`rank ${env.rank}: ${what}`, ms, fn);
  return { env, value: join(uniqueId, env, bounded) };
}

/**
 * Starts this process's rank from the launcher's environment: rank 0 makes the NVSHMEM unique id
 * and serves it (to its job's ranks only, see rendezvous.ts), the others fetch it (bounded by
 * `timeoutMs`, default 120 s); once every peer has it, NVSHMEM starts on GPU LOCAL_RANK and the
 * endpoint for `config` is created, each collective bounded by `collectiveTimeoutMs`.
 */
export async function startFromEnv(
  config: Readonly<EpConfig>,
  o: EnvStartOptions = {},
): Promise<{ env: LaunchEnv; runtime: CudaRuntime; endpoint: RankEndpoint }> {
  const { env, value } = await startRankFromEnv(
    o,
    () => getUniqueId(),
    (uniqueId, env, bounded) => {
      const runtime = bounded("NVSHMEM init", () =>
        CudaRuntime.create({
          uniqueId,
          rank: env.rank,
          ranks: env.worldSize,
          // SWITCHYARD_CUDA_RANKS_PER_GPU local ranks share a GPU (several NVSHMEM PEs on one GPU).
          device: Math.floor(env.localRank / ranksPerGpu(o.env ?? process.env)),
          native: runtimeOptionsFromEnv(o.env),
        }),
      );
      const endpoint = bounded("the endpoint's symmetric allocation", () =>
        RankEndpoint.create(runtime, config, { timeoutMs: o.stepTimeoutMs }),
      );
      return { runtime, endpoint };
    },
  );
  return { env, ...value };
}
