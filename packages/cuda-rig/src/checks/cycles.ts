import { defineConfig, type EpConfig } from "@switchyard/core";
import { endpointLayout } from "@switchyard/cuda";
import { WorkerGroup, type WorkerSetup } from "../launcher.js";
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
  /** A checked step every this many cycles, warm-up included (and on the last), default 50. */
  checkEvery?: number;
  /**
   * Cycles before the judged ones (checked steps included, at the same rate), default 6,000.
   * Measured on an H100 (one rank): a worker's RSS grows by ~80 MiB to ~745 MiB in steps of up to
   * 16 MiB, heapUsed and external flat: ~45 MiB over the first few thousand create / destroy
   * cycles and ~40 MiB over the first tens of checked steps; then it stays within 3 MiB to 10,000
   * cycles. A loop of the C ABI's create / destroy alone stays flat from the start.
   */
  warmup?: number;
  /** Every rank's memory is sampled every this many cycles (and after the last), default count / 10. */
  sampleEvery?: number;
  timeoutMs?: number;
  seed?: number;
  /** How the workers start (ranks per GPU, runtime options), unless `launch` is given. */
  workers?: WorkerSetup;
  /** Starts the workers (default: real workers started as `workers` says). */
  launch?: (ranks: number, env: Record<string, string>) => Promise<WorkerGroup>;
  /** Compare the checked steps with core's reference (default true). */
  verify?: boolean;
  onProgress?: (done: number, total: number) => void;
}

/** Every rank's memory after `cycle` cycles past the warm-up (-warmup: before any cycle). */
export interface CycleSample {
  cycle: number;
  ranks: MemorySample[];
}

const MIB = 2 ** 20;
/** Leak rule for host memory: RSS growth over the second half, extrapolated per 1,000 cycles. */
export const RSS_LIMIT_PER_1000 = 16 * MIB;
/**
 * Second-half RSS growth below this never fails: a worker's RSS moves by a few MiB on its own
 * (garbage collection, the allocator), which a short run would extrapolate into a "leak". From
 * 1,000 cycles on the rate limit is the stricter one.
 */
export const RSS_NOISE_BYTES = 8 * MIB;
/** Leak rule for GPU memory: in use on any rank may not move by more than this, first sample to last. */
export const GPU_LIMIT_BYTES = 2 * MIB;

/**
 * The leak verdict, on the cycles after the warm-up. RSS is judged on their second half only:
 * early cycles grow it while V8 and the allocator warm up (tens of MiB, then flat), whereas a leak
 * keeps growing it at the same rate to the end. GPU memory has no warm-up: first judged sample to last.
 */
export interface LeakVerdict {
  ok: boolean;
  /** The second half: samples from this cycle to the last. */
  fromCycle: number;
  toCycle: number;
  /** Per rank: RSS growth rate over the second half (least-squares slope), bytes per 1,000 cycles. */
  rssPer1000: number[];
  /** Per rank: that rate times the second half's length, bytes. */
  rssSecondHalfBytes: number[];
  /** Largest change over the ranks of GPU memory in use, first judged sample to last, bytes. */
  gpuDeltaBytes: number;
  limits: { rssPer1000: number; rssNoiseBytes: number; gpuBytes: number };
}

export interface CyclesReport {
  ok: boolean;
  ranks: number;
  cycles: number;
  warmup: number;
  configs: EpConfig[];
  stepsChecked: number;
  errors: string[];
  /** Before any cycle vs the last sample, warm-up included: reported in full, the verdict is `leak`. */
  memory: MemoryFigures | null;
  /** Every rank's memory before any cycle, after the warm-up, every `sampleEvery` cycles and at the end. */
  series: CycleSample[];
  leak: LeakVerdict | null;
  cyclesPerSecond: number;
  wallMs: number;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const mx = points.reduce((a, [x]) => a + x, 0) / points.length;
  const my = points.reduce((a, [, y]) => a + y, 0) / points.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den > 0 ? num / den : 0;
}

/** The leak rules (see LeakVerdict) on a series' samples from cycle 0; null with fewer than two. */
export function judgeLeak(series: CycleSample[]): LeakVerdict | null {
  const judged = series.filter((s) => s.cycle >= 0);
  if (judged.length < 2) return null;
  const first = judged[0];
  const last = judged[judged.length - 1];
  const middle = (first.cycle + last.cycle) / 2;
  let half = judged.filter((s) => s.cycle >= middle);
  if (half.length < 2) half = judged.slice(-2);
  const fromCycle = half[0].cycle;
  const rates = first.ranks.map((_, r) =>
    slope(half.map((s): [number, number] => [s.cycle, s.ranks[r].rss])),
  );
  const rssPer1000 = rates.map((v) => v * 1000);
  const rssSecondHalfBytes = rates.map((v) => v * (last.cycle - fromCycle));
  const gpuDeltaBytes = memoryFigures(first.ranks, last.ranks).gpuDeltaBytes;
  const leaking = rssPer1000.some(
    (v, r) => v > RSS_LIMIT_PER_1000 && rssSecondHalfBytes[r] > RSS_NOISE_BYTES,
  );
  return {
    ok: !leaking && Math.abs(gpuDeltaBytes) <= GPU_LIMIT_BYTES,
    fromCycle,
    toCycle: last.cycle,
    rssPer1000,
    rssSecondHalfBytes,
    gpuDeltaBytes,
    limits: { rssPer1000: RSS_LIMIT_PER_1000, rssNoiseBytes: RSS_NOISE_BYTES, gpuBytes: GPU_LIMIT_BYTES },
  };
}

/**
 * Session create / destroy cycles on one set of workers (the pool's reuse path, without the pool):
 * each cycle opens a session of the next config (collective endpoint creation) and destroys it
 * (collective free); every `checkEvery` cycles the session first runs a step checked against core's
 * reference. Every rank's GPU and host memory is sampled before any cycle, after the `warmup`
 * cycles, every `sampleEvery` cycles and at the end; judgeLeak gives the verdict.
 */
export async function runCycles(o: CyclesOptions): Promise<CyclesReport> {
  const t0 = Date.now();
  const configs = cycleConfigs(o.ranks);
  const warmup = o.warmup ?? 6000;
  const every = o.checkEvery ?? 50;
  const sampleEvery = o.sampleEvery ?? Math.max(1, Math.ceil(o.count / 10));
  const timeoutMs = o.timeoutMs ?? 10_000;
  const heap = heapSizeFor(Math.max(...configs.map((c) => endpointLayout(c).symmetricBytes)));
  const report: CyclesReport = {
    ok: false,
    ranks: o.ranks,
    cycles: 0,
    warmup,
    configs,
    stepsChecked: 0,
    errors: [],
    memory: null,
    series: [],
    leak: null,
    cyclesPerSecond: 0,
    wallMs: 0,
  };
  const env = { NVSHMEM_SYMMETRIC_SIZE: String(heap) };
  const launch = o.launch ?? ((ranks, e) => WorkerGroup.launch({ ...o.workers, ranks, env: e }));
  const group = await launch(o.ranks, env);
  const keep = async () => {};
  const sample = async (cycle: number) => {
    report.series.push({ cycle, ranks: await sampleMemory(group) });
  };
  let loopStart = Date.now();
  try {
    await sample(-warmup);
    const total = warmup + o.count;
    for (let i = 0; i < total; i++) {
      const config = configs[i % configs.length];
      const session = await CudaSession.open(config, group, timeoutMs, { release: keep });
      let failed = false;
      try {
        // Steps in the warm-up too: their first ones grow RSS as much as the cycles do.
        if (i % every === 0 || i === total - 1) {
          const errors = await checkedStep(session, config, (o.seed ?? 1000) + i, { verify: o.verify });
          report.stepsChecked++;
          for (const e of errors) report.errors.push(`cycle ${i - warmup}: ${e}`);
          failed = errors.length > 0;
        }
      } finally {
        await session.destroy();
      }
      if (group.failure) throw group.failure;
      if (i >= warmup) report.cycles++;
      if (i === warmup - 1) {
        await sample(0);
        loopStart = Date.now();
      } else if (i >= warmup && (report.cycles % sampleEvery === 0 || i === total - 1)) {
        await sample(report.cycles);
      }
      if (failed || report.errors.length > 20) break;
      if (i >= warmup && (report.cycles % 100 === 0 || i === total - 1))
        o.onProgress?.(report.cycles, o.count);
    }
    const s = report.series;
    if (s.length >= 2) report.memory = memoryFigures(s[0].ranks, s[s.length - 1].ranks);
    report.leak = judgeLeak(s);
  } catch (e) {
    report.errors.push(`${(e as Error).name}: ${(e as Error).message}`);
  } finally {
    await group.close();
  }
  report.wallMs = Date.now() - t0;
  report.cyclesPerSecond = report.cycles / ((Date.now() - loopStart) / 1000);
  report.ok = report.errors.length === 0 && report.cycles === o.count && report.leak?.ok === true;
  return report;
}

/** The report in a few lines. */
export function formatCycles(r: CyclesReport): string {
  const mib = (b: number) => `${(b / MIB).toFixed(1)} MiB`;
  const lines = [
    `${r.ok ? "PASS" : "FAIL"} cycles: ${r.cycles} session create / destroy cycles on ${r.ranks} ranks (${r.configs.length} configs in turn), ` +
      `${r.stepsChecked} steps checked against the reference, ${r.cyclesPerSecond.toFixed(1)} cycles/s`,
  ];
  const m = r.memory;
  const v = r.leak;
  const judged = r.series.filter((s) => s.cycle >= 0);
  if (m && v && judged.length >= 2) {
    const per = (ss: MemorySample[], f: (s: MemorySample) => number) => ss.map((s) => mib(f(s))).join(" / ");
    const [w, last] = [judged[0].ranks, m.after];
    lines.push(
      `  GPU used per rank: after the warm-up ${per(w, (s) => s.gpuUsedBytes)}, last ${per(last, (s) => s.gpuUsedBytes)} ` +
        `(largest change ${mib(v.gpuDeltaBytes)}; limit ${mib(v.limits.gpuBytes)})`,
    );
    lines.push(
      `  worker RSS per rank: before any cycle ${per(m.before, (s) => s.rss)}, after the ${r.warmup} warm-up cycles ` +
        `${per(w, (s) => s.rss)}, last ${per(last, (s) => s.rss)} (largest change, first to last: ${mib(m.rssDeltaBytes)})`,
    );
    lines.push(
      `  RSS growth over the second half (cycles ${v.fromCycle} to ${v.toCycle}): ${v.rssPer1000.map(mib).join(" / ")} per 1,000 cycles ` +
        `(limit ${mib(v.limits.rssPer1000)} per 1,000 cycles, unless under ${mib(v.limits.rssNoiseBytes)} in all)`,
    );
    lines.push(`  series, MiB after cycles ${r.series.map((s) => s.cycle).join(", ")}:`);
    for (let rank = 0; rank < r.ranks; rank++) {
      const row = (f: (s: MemorySample) => number) =>
        r.series.map((s) => (s.ranks[rank] ? (f(s.ranks[rank]) / MIB).toFixed(0) : "?")).join(" ");
      lines.push(`    rank ${rank}: RSS ${row((s) => s.rss)}; GPU used ${row((s) => s.gpuUsedBytes)}`);
    }
  }
  for (const e of r.errors.slice(0, 5)) lines.push(`  ${e}`);
  return lines.join("\n");
}
