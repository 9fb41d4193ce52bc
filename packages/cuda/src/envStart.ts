import type { EpConfig } from "@switchyard/core";
import { RankEndpoint } from "./endpoint.js";
import { fetchUniqueId, serveUniqueId } from "./rendezvous.js";
import { CudaRuntime, getUniqueId, UNIQUE_ID_BYTES } from "./runtime.js";
import { runtimeOptionsFromEnv } from "./runtimeEnv.js";

/** Where a rank is, read from the launcher's environment. */
export interface LaunchEnv {
  rank: number;
  worldSize: number;
  localRank: number;
  masterAddr: string;
  /** The port rank 0 serves the unique id on. */
  port: number;
  source: "torchrun" | "slurm" | "mpi";
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
 * _LOCAL_RANK), first match wins. Rank 0's address is MASTER_ADDR (Slurm: else
 * SLURM_LAUNCH_NODE_IPADDR; default 127.0.0.1 for a single host); the port is
 * SWITCHYARD_RENDEZVOUS_PORT, else MASTER_PORT, else 29517.
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
    env.MASTER_ADDR ?? (source === "slurm" ? env.SLURM_LAUNCH_NODE_IPADDR : undefined) ?? "127.0.0.1";
  const portVar = env.SWITCHYARD_RENDEZVOUS_PORT !== undefined ? "SWITCHYARD_RENDEZVOUS_PORT" : "MASTER_PORT";
  const port = env[portVar] !== undefined ? int(env, portVar) : 29517;
  if (port < 1 || port > 65535) throw new Error(`launch environment: ${portVar}=${port} is not a TCP port`);
  return { rank, worldSize, localRank, masterAddr, port, source };
}

export interface EnvStartOptions {
  timeoutMs?: number;
  /** Receive-stage timeout of the endpoint. */
  stepTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts this process's rank from the launcher's environment: rank 0 makes the NVSHMEM unique id
 * and serves it over TCP, the others fetch it (all bounded by `timeoutMs`, default 120 s); then
 * NVSHMEM starts on GPU LOCAL_RANK and the endpoint for `config` is created (collective).
 */
export async function startFromEnv(
  config: Readonly<EpConfig>,
  o: EnvStartOptions = {},
): Promise<{ env: LaunchEnv; runtime: CudaRuntime; endpoint: RankEndpoint }> {
  const env = parseLaunchEnv(o.env);
  const timeoutMs = o.timeoutMs ?? 120_000;
  let uniqueId: Uint8Array;
  if (env.rank === 0) {
    uniqueId = getUniqueId();
    const server = await serveUniqueId({ port: env.port, uniqueId, peers: env.worldSize - 1, timeoutMs });
    server.done.catch((e) => console.error(`switchyard: ${(e as Error).message}`));
  } else {
    uniqueId = await fetchUniqueId({
      host: env.masterAddr,
      port: env.port,
      bytes: UNIQUE_ID_BYTES,
      timeoutMs,
    });
  }
  const runtime = CudaRuntime.create({
    uniqueId,
    rank: env.rank,
    ranks: env.worldSize,
    device: env.localRank,
    native: runtimeOptionsFromEnv(o.env),
  });
  const endpoint = RankEndpoint.create(runtime, config, { timeoutMs: o.stepTimeoutMs });
  return { env, runtime, endpoint };
}
