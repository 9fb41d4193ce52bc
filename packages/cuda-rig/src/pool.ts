import type { NativeRuntimeOptions } from "@switchyard/cuda";
import { WorkerGroup } from "./launcher.js";

/**
 * Worker groups are expensive to start (processes, CUDA contexts, NVSHMEM init), so a group that
 * served a session cleanly goes back to the pool and the next session of the same world size
 * reuses it. Idle groups do not keep the process alive. A group whose session failed is closed.
 */
interface Idle {
  group: WorkerGroup;
  heapBytes: number;
  /** The launch options the group was started with (JSON). */
  key: string;
}

const idle: Idle[] = [];
const busy = new Map<WorkerGroup, { heapBytes: number; key: string }>();

/** NVSHMEM_SYMMETRIC_SIZE for a group that must hold `bytes` of symmetric buffers (and staging). */
export function heapSizeFor(bytes: number): number {
  const want = 2 * bytes + 512 * 2 ** 20;
  const step = 256 * 2 ** 20;
  return Math.max(2 * 2 ** 30, Math.ceil(want / step) * step);
}

/**
 * A healthy worker group of exactly `ranks` workers whose heap fits `symmetricBytes` (or, with
 * `worldRanks` > `ranks`, of at least `ranks`: config rank r runs on worker r and the others only
 * join the collective allocation as bystanders. The backend does not use that yet: it was not
 * verified on a GPU machine, see results/2026-11-21-checks/README.md, run 5).
 */
export async function acquireGroup(
  ranks: number,
  symmetricBytes: number,
  worldRanks = ranks,
  env: Record<string, string> = {},
  launch: { ranksPerGpu?: number; native?: NativeRuntimeOptions } = {},
): Promise<WorkerGroup> {
  // Groups started with other launch options (ranks per GPU, runtime options) are not reused.
  const key = JSON.stringify([launch.ranksPerGpu ?? null, launch.native ?? null]);
  const i = idle.findIndex(
    (g) =>
      g.key === key &&
      (worldRanks > ranks ? g.group.ranks >= ranks : g.group.ranks === ranks) &&
      g.heapBytes >= heapSizeFor(symmetricBytes) &&
      !g.group.failure,
  );
  if (i >= 0) {
    const [{ group, heapBytes }] = idle.splice(i, 1);
    busy.set(group, { heapBytes, key });
    group.ref(true);
    return group;
  }
  // Groups of other world sizes stay alive beside the new one (a GPU can host a worker of each
  // world), so a suite that alternates world sizes starts each size once. An idle group of the
  // same size is replaced (its heap was too small). SWITCHYARD_POOL_EXCLUSIVE=1 restores one
  // world at a time.
  const stale =
    process.env.SWITCHYARD_POOL_EXCLUSIVE === "1"
      ? idle.splice(0, idle.length)
      : takeIdle((g) => g.group.ranks === ranks);
  await Promise.all(stale.map((g) => g.group.close()));
  const userHeap = process.env.NVSHMEM_SYMMETRIC_SIZE;
  const heapBytes = userHeap ? Number.POSITIVE_INFINITY : heapSizeFor(symmetricBytes);
  const group = await WorkerGroup.launch({
    ...launch,
    ranks: Math.max(ranks, worldRanks),
    env: userHeap ? env : { NVSHMEM_SYMMETRIC_SIZE: String(heapBytes), ...env },
  });
  busy.set(group, { heapBytes, key });
  return group;
}

export async function releaseGroup(group: WorkerGroup, healthy: boolean): Promise<void> {
  const { heapBytes, key } = busy.get(group) ?? { heapBytes: 0, key: "" };
  busy.delete(group);
  if (healthy && !group.failure) {
    group.ref(false);
    idle.push({ group, heapBytes, key });
  } else {
    await group.close();
  }
}

function takeIdle(match: (g: Idle) => boolean): Idle[] {
  const taken = idle.filter(match);
  for (const g of taken) idle.splice(idle.indexOf(g), 1);
  return taken;
}

/** Closes every idle group. */
export async function drainPool(): Promise<void> {
  const all = idle.splice(0, idle.length);
  await Promise.all(all.map((g) => g.group.close()));
}
