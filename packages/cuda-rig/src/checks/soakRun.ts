import type { EpConfig } from "@switchyard/core";
import { endpointLayout } from "@switchyard/cuda";
import { WorkerGroup, type WorkerSetup } from "../launcher.js";
import { heapSizeFor } from "../pool.js";
import { buildSoakSets, type RankSet, soakConfigs } from "./soakPlan.js";
import type { SoakChunk } from "./soakRank.js";

export interface MemorySample {
  rank: number;
  /** cudaMemGetInfo: total - free, bytes. */
  gpuUsedBytes: number;
  rss: number;
  heapUsed: number;
}

export interface MemoryFigures {
  before: MemorySample[];
  after: MemorySample[];
  /** Largest change over the ranks, bytes (after - before). */
  gpuDeltaBytes: number;
  rssDeltaBytes: number;
  /** GPU within 2 MiB, host resident memory within 64 MiB on every rank. */
  flat: boolean;
}

export interface SoakReport {
  ok: boolean;
  ranks: number;
  layouts: string[];
  configs: EpConfig[];
  sets: number;
  stepsRequested: number;
  stepsDone: number;
  stepsPerSecond: number;
  mismatchedSteps: number;
  mismatches: string[];
  error: string | null;
  /** The run stopped at maxSeconds before stepsRequested. */
  cut: boolean;
  memory: MemoryFigures | null;
  parentRss: { before: number; after: number };
  setupMs: number;
  wallMs: number;
}

export interface SoakOptions {
  ranks: number;
  steps: number;
  layouts: ("masked" | "contiguous")[];
  /** Input sets per layout, checked against a reference computed once (default 64). */
  sets?: number;
  seed?: number;
  /** Steps per worker request (default 2500): progress and the JSON are updated after each. */
  chunk?: number;
  timeoutMs?: number;
  /** Stop after this long (the report says `cut`). */
  maxSeconds?: number;
  /** How the workers start (ranks per GPU, runtime options), unless `launch` is given. */
  workers?: WorkerSetup;
  /** Starts the workers (default: real workers started as `workers` says). */
  launch?: (ranks: number, env: Record<string, string>) => Promise<WorkerGroup>;
  /** After every chunk: the report so far (stepsDone, steps/s, mismatches). */
  onProgress?: (r: SoakReport) => void;
}

const MIB = 2 ** 20;

export async function sampleMemory(group: WorkerGroup): Promise<MemorySample[]> {
  const m = await group.all<{ gpuFree: number; gpuTotal: number; rss: number; heapUsed: number }>(
    "memory",
    () => ({}),
    60_000,
  );
  return m.map((x, rank) => ({
    rank,
    gpuUsedBytes: x.gpuTotal - x.gpuFree,
    rss: x.rss,
    heapUsed: x.heapUsed,
  }));
}

export function memoryFigures(before: MemorySample[], after: MemorySample[]): MemoryFigures {
  const d = (f: (s: MemorySample) => number) =>
    after.reduce((m, a, i) => {
      const v = f(a) - f(before[i]);
      return Math.abs(v) > Math.abs(m) ? v : m;
    }, 0);
  const gpuDeltaBytes = d((s) => s.gpuUsedBytes);
  const rssDeltaBytes = d((s) => s.rss);
  return {
    before,
    after,
    gpuDeltaBytes,
    rssDeltaBytes,
    flat: Math.abs(gpuDeltaBytes) <= 2 * MIB && rssDeltaBytes <= 64 * MIB,
  };
}

/**
 * The soak: `steps` steps on `ranks` workers, routing, token count and layout changing every step
 * (a rotating pool of `sets` input sets per layout, each checked against core's reference computed
 * once here), every step's counts, data rows and y compared on the rank (checks/soakRank.ts).
 * GPU and host memory are sampled after a warm-up chunk and at the end.
 */
export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const t0 = Date.now();
  const parentBefore = process.memoryUsage().rss;
  const configs = soakConfigs(o.ranks, o.layouts);
  const sets = o.sets ?? 64;
  const chunk = o.chunk ?? 2500;
  const seed = o.seed ?? 900;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const built: RankSet[][][] = [];
  for (const config of configs) built.push(await buildSoakSets(config, sets, seed));
  const heap = heapSizeFor(configs.reduce((n, c) => n + endpointLayout(c).symmetricBytes, 0));
  const env: Record<string, string> = { NVSHMEM_SYMMETRIC_SIZE: String(heap) };
  const report: SoakReport = {
    ok: false,
    ranks: o.ranks,
    layouts: [...o.layouts],
    configs,
    sets,
    stepsRequested: o.steps,
    stepsDone: 0,
    stepsPerSecond: 0,
    mismatchedSteps: 0,
    mismatches: [],
    error: null,
    cut: false,
    memory: null,
    parentRss: { before: parentBefore, after: parentBefore },
    setupMs: 0,
    wallMs: 0,
  };
  const launch = o.launch ?? ((ranks, e) => WorkerGroup.launch({ ...o.workers, ranks, env: e }));
  const group = await launch(o.ranks, env);
  let healthy = true;
  try {
    await group.all(
      "soakSetup",
      (r) => ({
        id: 1,
        timeoutMs,
        layouts: configs.map((config, l) => ({ config, sets: built[l].map((s) => s[r]) })),
      }),
      600_000,
    );
    report.setupMs = Date.now() - t0;
    const runStart = Date.now();
    let before: MemorySample[] | null = null;
    for (let from = 0; from < o.steps; ) {
      const to = Math.min(o.steps, from + (from === 0 ? Math.min(chunk, 200) : chunk));
      const chunks = await group.all<SoakChunk>("soakRun", () => ({ id: 1, from, to }), 600_000);
      report.stepsDone += Math.min(...chunks.map((c) => c.steps));
      for (const c of chunks) {
        report.mismatchedSteps += c.mismatchedSteps;
        for (const m of c.mismatches) if (report.mismatches.length < 20) report.mismatches.push(m);
        if (c.error && report.error === null) report.error = `rank ${c.rank}: ${c.error}`;
      }
      report.stepsPerSecond = report.stepsDone / ((Date.now() - runStart) / 1000);
      if (before === null) before = await sampleMemory(group);
      from = to;
      report.wallMs = Date.now() - t0;
      if (report.error) {
        healthy = false;
        break;
      }
      if (o.maxSeconds !== undefined && from < o.steps && Date.now() - t0 > o.maxSeconds * 1000) {
        report.cut = true;
        break;
      }
      if (from < o.steps) o.onProgress?.(report);
    }
    if (before) report.memory = memoryFigures(before, await sampleMemory(group));
    if (healthy) await group.all("soakClose", () => ({ id: 1 }), 120_000);
  } catch (e) {
    report.error ??= `${(e as Error).name}: ${(e as Error).message}`;
  } finally {
    await group.close();
  }
  report.parentRss.after = process.memoryUsage().rss;
  report.wallMs = Date.now() - t0;
  report.ok =
    report.error === null &&
    report.mismatchedSteps === 0 &&
    report.stepsDone === o.steps &&
    report.memory?.flat === true;
  o.onProgress?.(report);
  return report;
}

/** The report in a few lines. */
export function formatSoak(r: SoakReport): string {
  const mem = r.memory;
  const mib = (b: number) => `${(b / MIB).toFixed(1)} MiB`;
  const lines = [
    `${r.ok ? "PASS" : "FAIL"} soak: ${r.stepsDone} of ${r.stepsRequested} steps on ${r.ranks} ranks (${r.layouts.join(" + ")}, ${r.sets} input sets each), ` +
      `${r.mismatchedSteps} mismatched, ${r.stepsPerSecond.toFixed(0)} steps/s${r.cut ? " (cut by --max-seconds)" : ""}`,
  ];
  if (mem) {
    const g = (s: MemorySample[]) => s.map((x) => mib(x.gpuUsedBytes)).join(" / ");
    const h = (s: MemorySample[]) => s.map((x) => mib(x.rss)).join(" / ");
    lines.push(
      `  GPU used per rank: before ${g(mem.before)}, after ${g(mem.after)} (largest change ${mib(mem.gpuDeltaBytes)})`,
    );
    lines.push(
      `  worker RSS per rank: before ${h(mem.before)}, after ${h(mem.after)} (largest change ${mib(mem.rssDeltaBytes)})`,
    );
  }
  if (r.error) lines.push(`  error: ${r.error}`);
  for (const m of r.mismatches.slice(0, 5)) lines.push(`  ${m}`);
  return lines.join("\n");
}
