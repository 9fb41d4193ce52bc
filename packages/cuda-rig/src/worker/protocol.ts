import type { SerializedError } from "../workerErrors.js";

/** A request from the launcher to a rank's worker process. */
export interface WorkerRequest {
  id: number;
  op: string;
  args?: unknown;
}

/** The worker's answer to request `id`. */
export type WorkerResponse =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SerializedError };

/** Environment every worker gets: NVLink multicast stays off in every process (DESIGN.md). */
export const MULTICAST_OFF_ENV = {
  NVSHMEM_DISABLE_NVLS: "1",
  NCCL_NVLS_ENABLE: "0",
  TORCH_SYMM_MEM_DISABLE_MULTICAST: "1",
} as const;
