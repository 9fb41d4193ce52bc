import { computeLayout, defineConfig, type EpConfig } from "@switchyard/core";
import { WorkerGroup } from "../launcher.js";
import { heapSizeFor } from "../pool.js";
import { CudaSession } from "../session.js";
import { type MemoryFigures, type MemorySample, memoryFigures, sampleMemory } from "./soakRun.js";
import { checkedStep } from "./world.js";

/**
 * Three configs the cycles rotate through, of very different sizes (the largest ~19 MB of
 * symmetric heap per rank at 4 ranks), so a heap that leaked a session's buffers would run out of
 * NVSHMEM's symmetric memory within about a hundred cycles, and cudaMemGetInfo would show a leak of
 * the endpoint's local buffers at once.
 */
export function cycleConfigs(ranks: number): EpConfig[] {
  return [
    defineConfig({ ranks, experts: 4 * ranks, topK: 3, hidden: 256, maxTokensPerRank: 16 }),
    defineConfig({
      ranks,
      experts: 8 * ranks,
      topK: 4,
      hidden: 512,
      maxTokensPerRank: 64,
      dispatchDtype: "fp8-e4m3",
    }),
    defineConfig({ ranks, experts: 4 * ranks, topK: 4, hidden: 2048, maxTokensPerRank: 128 }),
  ];
}

export interface CyclesOptions {
  ranks: number;
  count: number;
  /** A checked step every this many cycles (and on the last), default 50. */
  checkEvery?: number;
  /** Cycles before the "before" memory sample, default 10. */
  warmup?: number;
  timeoutMs?: number;
  seed?: number;
  launch?: (ranks: number, env: Record<string, string>) => Promise<WorkerGroup>;
  /** Compare the checked steps with core's reference (default true). */
  verify?: boolean;
  onProgress?: (done: number, total: number) => void;
}

export interface CyclesReport {
  ok: boolean;
  ranks: number;
  cycles: number;
  configs: EpConfig[];
  stepsChecked: number;
  errors: string[];
  memory: MemoryFigures | null;
  cyclesPerSecond: number;
  wallMs: number;
}

/**
 * Session create / destroy cycles on one set of workers (the pool's reuse path, without the pool):
 * each cycle opens a session of the next config (collective endpoint creation) and destroys it
 * (collective free); every `checkEvery` cycles the session first runs a step checked against core's
 * reference. GPU and host memory are sampled after `warmup` cycles and at the end.
 */
export async function runCycles(o: CyclesOptions): Promise<CyclesReport> {
  const t0 = Date.now();
  const configs = cycleConfigs(o.ranks);
  const warmup = o.warmup ?? 10;
  const every = o.checkEvery ?? 50;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const heap = heapSizeFor(Math.max(...configs.map((c) => computeLayout(c).symmetricBytes)));
  const report: CyclesReport = {
    ok: false,
    ranks: o.ranks,
    cycles: 0,
    configs,
    stepsChecked: 0,
    errors: [],
    memory: null,
    cyclesPerSecond: 0,
    wallMs: 0,
  };
  const env = { NVSHMEM_SYMMETRIC_SIZE: String(heap) };
  const group = await (o.launch ?? ((ranks, e) => WorkerGroup.launch({ ranks, env: e })))(o.ranks, env);
  const keep = async () => {};
  let before: MemorySample[] | null = null;
  let loopStart = Date.now();
  try {
    if (warmup === 0) before = await sampleMemory(group);
    const total = warmup + o.count;
    for (let i = 0; i < total; i++) {
      const config = configs[i % configs.length];
      const session = await CudaSession.open(config, group, timeoutMs, { release: keep });
      let failed = false;
      try {
        const n = i - warmup;
        if (n >= 0 && (n % every === 0 || i === total - 1)) {
          const errors = await checkedStep(session, config, (o.seed ?? 1000) + i, { verify: o.verify });
          report.stepsChecked++;
          for (const e of errors) report.errors.push(`cycle ${n}: ${e}`);
          failed = errors.length > 0;
        }
      } finally {
        await session.destroy();
      }
      if (group.failure) throw group.failure;
      if (i >= warmup) report.cycles++;
      if (i === warmup - 1) {
        before = await sampleMemory(group);
        loopStart = Date.now();
      }
      if (failed || report.errors.length > 20) break;
      if (i >= warmup && (report.cycles % 100 === 0 || i === total - 1))
        o.onProgress?.(report.cycles, o.count);
    }
    if (before) report.memory = memoryFigures(before, await sampleMemory(group));
  } catch (e) {
    report.errors.push(`${(e as Error).name}: ${(e as Error).message}`);
  } finally {
    await group.close();
  }
  report.wallMs = Date.now() - t0;
  report.cyclesPerSecond = report.cycles / ((Date.now() - loopStart) / 1000);
  report.ok = report.errors.length === 0 && report.cycles === o.count && report.memory?.flat === true;
  return report;
}

/** The report in a few lines. */
export function formatCycles(r: CyclesReport): string {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  const lines = [
    `${r.ok ? "PASS" : "FAIL"} cycles: ${r.cycles} session create / destroy cycles on ${r.ranks} ranks (${r.configs.length} configs in turn), ` +
      `${r.stepsChecked} steps checked against the reference, ${r.cyclesPerSecond.toFixed(1)} cycles/s`,
  ];
  const m = r.memory;
  if (m) {
    lines.push(
      `  GPU used per rank: before ${m.before.map((s) => mib(s.gpuUsedBytes)).join(" / ")}, after ${m.after.map((s) => mib(s.gpuUsedBytes)).join(" / ")} (largest change ${mib(m.gpuDeltaBytes)})`,
    );
    lines.push(
      `  worker RSS per rank: before ${m.before.map((s) => mib(s.rss)).join(" / ")}, after ${m.after.map((s) => mib(s.rss)).join(" / ")} (largest change ${mib(m.rssDeltaBytes)})`,
    );
  }
  for (const e of r.errors.slice(0, 5)) lines.push(`  ${e}`);
  return lines.join("\n");
}
