import {
  type Backend,
  BackendUnavailableError,
  type Capabilities,
  DEFAULT_TIMEOUT_MS,
  type EpConfig,
  type Session,
  type SessionOptions,
  UnsupportedError,
  validateConfig,
} from "@switchyard/core";
import {
  CUDA_LAYOUTS,
  checkLayout,
  endpointLayout,
  loadNative,
  ranksPerGpu,
  visibleGpuCount,
} from "@switchyard/cuda";
import { acquireGroup } from "./pool.js";
import { CudaSession } from "./session.js";

/**
 * What this backend runs: the masked and contiguous layouts, bf16 or fp8 in and out (bf16 -> fp8
 * quantised in dispatch send), DP groups, deterministic row order, per-peer step counters with
 * the kernels' wait times (`stats`); one process per rank, one rank per GPU unless several were
 * asked for (SWITCHYARD_CUDA_RANKS_PER_GPU, launcher option ranksPerGpu), so at most visible GPUs
 * times that many ranks. topK at most 32 (a token's slots are one warp's lanes).
 * The contiguous layout and the stats were gated behind environment switches until device runs
 * proved them (results/2026-11-21-v1.md, 2026-11-21-v3.md).
 */
export function cudaCapabilities(gpus = visibleGpuCount() * ranksPerGpu()): Capabilities {
  return Object.freeze({
    layouts: CUDA_LAYOUTS,
    inputDtypes: ["bf16", "fp8-e4m3"],
    dispatchDtypes: ["bf16", "fp8-e4m3"],
    maxRanks: gpus,
    maxHidden: 1 << 16,
    maxTopK: 32,
    hiddenMultiple: 1,
    dpGroups: true,
    deterministicRowOrder: true,
    stats: true,
  } as const);
}

/** Why the backend cannot run here, or null. Never throws. */
export async function cudaUnavailableReason(): Promise<string | null> {
  try {
    const loaded = loadNative();
    if (loaded.addon === null) return loaded.reason;
    if (visibleGpuCount() === 0)
      return "no NVIDIA GPU visible (CUDA_VISIBLE_DEVICES, /proc/driver/nvidia, nvidia-smi)";
    return null;
  } catch (e) {
    return `cuda backend check failed: ${(e as Error).message}`;
  }
}

/** The CUDA backend: one worker process per rank (GPU), kernels over NVSHMEM. */
export const cudaBackend: Backend = {
  name: "cuda",
  get capabilities(): Capabilities {
    return cudaCapabilities();
  },
  unavailableReason: cudaUnavailableReason,
  async createSession(config: EpConfig, options: SessionOptions = {}): Promise<Session> {
    validateConfig(config);
    checkLayout(config.layout);
    const reason = await cudaUnavailableReason();
    if (reason !== null) throw new BackendUnavailableError("cuda", reason);
    const gpus = visibleGpuCount();
    const perGpu = ranksPerGpu();
    if (config.ranks > gpus * perGpu) {
      throw new UnsupportedError(
        "cuda",
        `${config.ranks} ranks: ${perGpu} rank(s) per GPU and only ${gpus} GPUs are visible (SWITCHYARD_CUDA_RANKS_PER_GPU sets ranks per GPU)`,
      );
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new RangeError(`createSession: timeoutMs ${timeoutMs} must be > 0`);
    const layout = endpointLayout(config);
    const group = await acquireGroup(config.ranks, layout.symmetricBytes);
    try {
      return await CudaSession.open(config, group, timeoutMs, { stats: true });
    } catch (e) {
      await group.close();
      throw e;
    }
  },
};
