import { defineConfig, type EpConfig, TimeoutError } from "@switchyard/core";
import { endpointLayout } from "@switchyard/cuda";
import { cudaBackend } from "../backend.js";
import { WorkerGroup, type WorkerSetup } from "../launcher.js";
import { backendOptionsFor } from "../options.js";
import { heapSizeFor } from "../pool.js";
import type { GraphStepOptions, GraphStepResult } from "./graphStep.js";

export interface GraphCheckOutcome {
  config: EpConfig;
  transport: "direct" | "put";
  ok: boolean;
  errors: string[];
  results: GraphStepResult[];
  wallMs: number;
}

/**
 * Runs the graph check (eager step + captured, replayed steps) on `config.ranks` worker processes,
 * started as `o.workers` says (default one rank per GPU, the library's runtime defaults).
 */
export async function runGraphCheck(
  config: EpConfig,
  o: Partial<Omit<GraphStepOptions, "config">> & {
    transport?: "direct" | "put";
    peerWrite?: { bytes: number; iters: number };
    workers?: WorkerSetup;
  } = {},
): Promise<GraphCheckOutcome & { peerWriteGBps?: number[] }> {
  const t0 = Date.now();
  // The transport: the one asked for here, else the workers' runtime option (stores by default).
  const transport = o.transport ?? (o.workers?.native?.transport === "put" ? "put" : "direct");
  const env: Record<string, string> = {
    NVSHMEM_SYMMETRIC_SIZE: String(heapSizeFor(endpointLayout(config).symmetricBytes)),
  };
  // The workers' runtimes take the transport from their options (not from the environment).
  const workers =
    o.transport === undefined
      ? o.workers
      : {
          ...o.workers,
          native: { ...o.workers?.native, transport: o.transport === "put" ? "put" : "auto" } as const,
        };
  const group = await WorkerGroup.launch({ ...workers, ranks: config.ranks, env });
  try {
    const opts: GraphStepOptions = {
      config,
      seed: o.seed ?? 1,
      tokens: o.tokens ?? config.maxTokensPerRank,
      warmup: o.warmup ?? 2,
      replays: o.replays ?? 5,
      timeoutMs: o.timeoutMs ?? 10_000,
      checkEvery: o.checkEvery ?? true,
      blocks: o.blocks,
    };
    const results = await group.all<GraphStepResult>("graphStep", () => opts, 300_000);
    let peerWriteGBps: number[] | undefined;
    if (o.peerWrite) peerWriteGBps = await group.all<number>("peerWrite", () => o.peerWrite, 120_000);
    // The transport asked for is the one the kernels took: puts to every other rank, or stores to all.
    const want = transport === "put" ? 1 : config.ranks;
    const errors = results.flatMap((r) => [
      ...r.errors,
      ...(r.directPeers === want
        ? []
        : [`rank ${r.rank}: transport ${transport} stores to ${r.directPeers} PEs, expected ${want}`]),
    ]);
    return {
      config,
      transport,
      ok: errors.length === 0,
      errors,
      results,
      wallMs: Date.now() - t0,
      peerWriteGBps,
    };
  } finally {
    await group.close();
  }
}

export interface TimeoutOutcome {
  case: string;
  ok: boolean;
  detail: string;
  elapsedMs: number;
}

/**
 * A rank that never arrives: in a 2-rank session with a short timeout, rank 1 skips a phase and
 * rank 0's wait must fail with TimeoutError(rank 0, peer 1, stage) within about the timeout (the
 * contiguous layout's first wait is in dispatch send, for every rank's counts). The sessions'
 * workers start as `workers` says.
 */
export async function runTimeoutChecks(
  timeoutMs = 500,
  layout: "masked" | "contiguous" = "masked",
  workers: WorkerSetup = {},
): Promise<TimeoutOutcome[]> {
  const backend = cudaBackend(backendOptionsFor(workers));
  const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 256, maxTokensPerRank: 8, layout });
  const input = {
    x: new Uint16Array(4 * 256).fill(0x3f80),
    topkIdx: Int32Array.from([0, 2, 1, 3, 2, 0, 3, 1]),
    topkWeights: new Float32Array(8).fill(0.5),
  };
  const out: TimeoutOutcome[] = [];
  const expect = async (name: string, stage: string, f: () => Promise<unknown>) => {
    const t0 = Date.now();
    try {
      await f();
      out.push({ case: name, ok: false, detail: "no error", elapsedMs: Date.now() - t0 });
    } catch (e) {
      const ok = e instanceof TimeoutError && e.rank === 0 && e.peer === 1 && e.stage === stage;
      out.push({
        case: name,
        ok,
        detail: `${(e as Error).name}: ${(e as Error).message}`,
        elapsedMs: Date.now() - t0,
      });
    }
  };
  {
    const s = await backend.createSession(config, { timeoutMs });
    await s.dispatchSend(0, input);
    // Contiguous: rank 0's own send waits for rank 1's counts (protocol version 2), so that is the stage.
    const stage = layout === "contiguous" ? "dispatch send" : "dispatch recv";
    await expect("rank 1 never dispatches", stage, () => s.dispatchRecv(0));
    await s.destroy();
  }
  {
    const s = await backend.createSession(config, { timeoutMs });
    await Promise.all([s.dispatchSend(0, input), s.dispatchSend(1, input)]);
    const [d0] = await Promise.all([s.dispatchRecv(0), s.dispatchRecv(1)]);
    await s.combineSend(0, new Uint16Array(d0.x.length));
    await expect("rank 1 never combines", "combine recv", () => s.combineRecv(0));
    await s.destroy();
  }
  return out;
}

/** The DeepSeek-like step of the issue: hidden 7168, 256 experts, top-8, 128 tokens per rank, fp8 dispatch. */
export function deepSeekConfig(ranks = 4): EpConfig {
  return defineConfig({
    ranks,
    experts: 256,
    topK: 8,
    hidden: 7168,
    maxTokensPerRank: 128,
    inputDtype: "bf16",
    dispatchDtype: "fp8-e4m3",
  });
}

export function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
