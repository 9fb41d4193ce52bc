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
  CUDA_OPTIONS,
  checkLayout,
  checkOptions,
  endpointLayout,
  loadNative,
  outputModeFor,
  visibleGpuCount,
} from "@switchyard/cuda";
import type { CudaBackendOptions } from "./options.js";
import { acquireGroup } from "./pool.js";
import { CudaSession } from "./session.js";

/**
 * What this backend runs: the masked and contiguous layouts, bf16 or fp8 in and out (bf16 -> fp8
 * quantised in dispatch send), DP groups, deterministic row order, per-peer step counters with
 * the kernels' wait times (`stats`); one process per rank, one rank per GPU unless several were
 * asked for (option `ranksPerGpu`), so at most visible GPUs times that many ranks (`maxRanks`,
 * default one rank per visible GPU). topK at most 32 (a token's slots are one warp's lanes). fp8
 * block scales in the pow2 format only (`scaleFormats`; other formats are refused before anything starts).
 * Router weights applied on the expert ranks only (`combineWeights` `expert`; `home` is refused likewise).
 * The contiguous layout and the stats were gated behind environment switches until device runs
 * proved them (results/2026-11-21-v1, results/2026-11-21-v3).
 */
export function cudaCapabilities(maxRanks = visibleGpuCount()): Capabilities {
  return Object.freeze({
    layouts: CUDA_LAYOUTS,
    inputDtypes: ["bf16", "fp8-e4m3"],
    dispatchDtypes: ["bf16", "fp8-e4m3"],
    maxRanks,
    maxHidden: 1 << 16,
    maxTopK: 32,
    hiddenMultiple: 1,
    dpGroups: true,
    deterministicRowOrder: true,
    stats: true,
    ...CUDA_OPTIONS,
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

/**
 * The CUDA backend with these options: one worker process per rank, kernels over NVSHMEM, e.g.
 * `cudaBackend({ output: "exact", ranksPerGpu: 2 })`. Options not given mean one rank per GPU, the
 * library's runtime defaults and worst-case output. Nothing here reads the environment.
 */
export function cudaBackend(options: CudaBackendOptions = {}, name = "cuda"): Backend {
  if (
    options.ranksPerGpu !== undefined &&
    !(Number.isInteger(options.ranksPerGpu) && options.ranksPerGpu >= 1)
  )
    throw new RangeError(`cudaBackend: ranksPerGpu ${options.ranksPerGpu} must be a whole number >= 1`);
  const perGpu = options.ranksPerGpu ?? 1;
  return {
    name,
    get capabilities(): Capabilities {
      return cudaCapabilities(visibleGpuCount() * perGpu);
    },
    unavailableReason: cudaUnavailableReason,
    async createSession(config: EpConfig, sessionOptions: SessionOptions = {}): Promise<Session> {
      validateConfig(config);
      checkLayout(config.layout);
      checkOptions(config);
      const output = outputModeFor(config, config.layout === "contiguous" ? options.output : undefined);
      const reason = await cudaUnavailableReason();
      if (reason !== null) throw new BackendUnavailableError(name, reason);
      const gpus = visibleGpuCount();
      if (config.ranks > gpus * perGpu) {
        throw new UnsupportedError(
          name,
          `${config.ranks} ranks: ${perGpu} rank(s) per GPU and only ${gpus} GPUs are visible (option ranksPerGpu, or SWITCHYARD_CUDA_RANKS_PER_GPU for the command lines, sets ranks per GPU)`,
        );
      }
      const timeoutMs = sessionOptions.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      if (!(timeoutMs > 0)) throw new RangeError(`createSession: timeoutMs ${timeoutMs} must be > 0`);
      const layout = endpointLayout(config);
      const group = await acquireGroup(
        config.ranks,
        layout.symmetricBytes,
        config.ranks,
        {},
        { ranksPerGpu: perGpu, native: options.runtime },
      );
      try {
        return await CudaSession.open(config, group, timeoutMs, { stats: true, output });
      } catch (e) {
        await group.close();
        throw e;
      }
    },
  };
}
