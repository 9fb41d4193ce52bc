import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { visibleGpuCount } from "@switchyard/cuda";
import { cudaUnavailableReason } from "../backend.js";
import { WorkerGroup, type WorkerSetup } from "../launcher.js";
import { BENCH_USAGE, type BenchOptions, BenchUsageError, parseBenchArgs } from "./args.js";
import { sweepPeers } from "./peerSweep.js";
import { isPeer, PEER_LAYOUT } from "./peers.js";
import { aggregate, type BenchPoint, failedPoint, heapBytesFor, ownTiming, planPoints } from "./plan.js";
import { Progress, type ProgressSink } from "./progress.js";
import type { RankPointOptions, RankPointResult } from "./rankPoint.js";
import { BENCH_SCHEMA, type BenchReport, BYTES_COUNTED, type Impl, type PointResult } from "./report.js";
import { renderSvg } from "./svg.js";
import { formatTable, peerNotes, sortedPoints, tableHeader, tableRow } from "./table.js";
import { checkTargets, formatTargets } from "./targets.js";
import { renderVegaLite, vegaLitePath } from "./vegaLite.js";

/** Where the bench writes: the table on `out`, messages on `err`, the progress bar on `progress`. */
export interface BenchIo {
  out(text: string): void;
  err(text: string): void;
  progress: ProgressSink;
}

/** Test seams: stand-in workers and GPU count, so the orchestration runs on a CPU machine. */
export interface BenchHooks {
  workerPath?: string;
  gpus?: number;
  unavailableReason?: () => Promise<string | null>;
  /** A stand-in for bench-peers/peers.py (run with --python). */
  peerScript?: string;
}

/** What `runBench` runs with besides its command line. */
export interface RunBenchOptions {
  /**
   * How the workers start: ranks per GPU (`--ranks` may be up to visible GPUs times that many) and
   * runtime options; default one rank per GPU, the library's defaults. The command lines pass what
   * their environment asked for.
   */
  workers?: WorkerSetup;
  /** Where the bench writes; default stdout, and stderr for messages and the progress bar. */
  io?: BenchIo;
  hooks?: BenchHooks;
}

const processIo: BenchIo = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  progress: { write: (t) => process.stderr.write(t), interactive: process.stderr.isTTY === true },
};

function commit(): string | null {
  if (process.env.SWITCHYARD_COMMIT) return process.env.SWITCHYARD_COMMIT;
  try {
    const head = execFileSync("git", ["rev-parse", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const dirty = execFileSync("git", ["status", "--porcelain"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return `${head.trim()}${dirty.trim() ? " (dirty)" : ""}`;
  } catch {
    const f = resolve(".gpu", "commit");
    return existsSync(f) ? readFileSync(f, "utf8").trim() : null;
  }
}

function gpuName(): string | null {
  try {
    const out = execFileSync("nvidia-smi", ["--query-gpu=name", "--format=csv,noheader"], {
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.split("\n")[0].trim() || null;
  } catch {
    return null;
  }
}

function writeOutputs(o: BenchOptions, report: BenchReport): void {
  for (const [path, text] of [
    [o.json, `${JSON.stringify(report, null, 1)}\n`],
    [o.svg, renderSvg(report)],
    [vegaLitePath(o.json), renderVegaLite(report)],
  ] as const) {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    writeFileSync(path, text);
  }
}

/**
 * Starts the workers (one per GPU unless `workers` puts several on one), measures the NVLink
 * peer-write bandwidth, brings NCCL up.
 */
async function startGroup(
  o: BenchOptions,
  ranks: number,
  points: BenchPoint[],
  report: BenchReport,
  io: BenchIo,
  hooks: BenchHooks,
  workers: WorkerSetup,
) {
  const env: Record<string, string> = { NVSHMEM_SYMMETRIC_SIZE: String(heapBytesFor(points)) };
  const group = await WorkerGroup.launch({ ...workers, ranks, env, workerPath: hooks.workerPath });
  if (report.nvlink.peerWriteGBps.length === 0) {
    const bytes = o.peerMiB * 2 ** 20;
    report.nvlink.peerWriteGBps = await group.all<number>("peerWrite", () => ({ bytes, iters: 10 }), 300_000);
    report.nvlink.minGBps = Math.min(...report.nvlink.peerWriteGBps);
    report.nvlink.bytesPerPeer = bytes;
  }
  report.device.smCount = (group.info[0] as { smCount?: number } | undefined)?.smCount ?? null;
  let nccl = false;
  if (o.baseline && report.nccl.reason === null) {
    try {
      const uniqueId = await group.call<Uint8Array>(0, "ncclUniqueId", {}, 60_000);
      const versions = await group.all<number>("ncclInit", () => ({ uniqueId }), 300_000);
      report.nccl = { version: versions[0], available: true, reason: null };
      nccl = true;
    } catch (e) {
      report.nccl = { version: null, available: false, reason: (e as Error).message };
      io.err(`bench: NCCL baseline unavailable: ${(e as Error).message}\n`);
    }
  }
  return { group, nccl };
}

/**
 * `switchyard bench`: the sweep of `parseBenchArgs`, on one worker process per GPU, ours and the
 * NCCL baseline point by point; a table row per point as it finishes (progress bar on stderr),
 * the JSON report and SVG plot rewritten after every point. Returns the exit status: 0, 1 when a
 * point failed or found errors, 2 for a bad command line or no GPU backend. The workers start as
 * `options.workers` says.
 */
export async function runBench(argv: string[], options: RunBenchOptions = {}): Promise<number> {
  const { io = processIo, hooks = {}, workers = {} } = options;
  let o: BenchOptions;
  try {
    o = parseBenchArgs(argv);
  } catch (e) {
    if (!(e instanceof BenchUsageError)) throw e;
    io.err(`switchyard bench: ${e.message}\n\n${BENCH_USAGE}`);
    return 2;
  }
  if (o.help) {
    io.out(BENCH_USAGE);
    return 0;
  }
  const reason = await (hooks.unavailableReason ?? cudaUnavailableReason)();
  if (reason !== null) {
    io.err(`switchyard bench: the CUDA backend cannot run here: ${reason}\n`);
    return 2;
  }
  const gpus = hooks.gpus ?? visibleGpuCount();
  const ranks = o.ranks ?? gpus;
  if (ranks < 1 || ranks > gpus * (workers.ranksPerGpu ?? 1) || o.experts % ranks !== 0) {
    io.err(
      `switchyard bench: ${ranks} ranks with ${gpus} visible GPUs and ${o.experts} experts is not possible\n`,
    );
    return 2;
  }
  const points = planPoints(o, ranks);
  const report: BenchReport = {
    schema: BENCH_SCHEMA,
    startedAt: new Date().toISOString(),
    finishedAt: null,
    command: `switchyard bench ${argv.join(" ")}`.trim(),
    device: { name: gpuName(), gpus, smCount: null },
    commit: commit(),
    config: {
      ranks,
      hidden: o.hidden,
      experts: o.experts,
      topK: o.topK,
      inputDtype: o.inputDtype,
      dispatchDtype: o.dispatchDtype,
      alignment: o.alignment,
    },
    options: {
      steps: o.steps,
      warmup: o.warmup,
      rotate: o.rotate,
      seed: o.seed,
      graphs: o.graphs,
      sms: o.sms,
      baseline: o.baseline,
      peers: o.peers,
      transport: workers.native?.transport ?? "auto",
      ...(workers.native?.kernelPerHalf ? { kernelPerHalf: true } : {}),
    },
    nvlink: { peerWriteGBps: [], minGBps: null, bytesPerPeer: 0 },
    nccl: { version: null, available: false, reason: o.baseline ? null : "--no-baseline" },
    bytesCounted: BYTES_COUNTED,
    points: [],
    notes: [],
  };
  const impls: Impl[] = o.baseline ? ["switchyard", "nccl"] : ["switchyard"];
  const peerRows = o.peers.reduce(
    (n, impl) => n + points.filter((p) => p.layout === PEER_LAYOUT[impl]).length,
    0,
  );
  const progress = new Progress(io.progress, points.length * impls.length + peerRows);
  let { group, nccl } = await startGroup(o, ranks, points, report, io, hooks, workers);
  io.out(
    `switchyard bench: ${ranks} x ${report.device.name ?? "GPU"}, peer-write ${report.nvlink.peerWriteGBps.map((g) => g.toFixed(0)).join(" / ")} GB/s` +
      `${report.nccl.version ? `, NCCL ${report.nccl.version}` : ""}, ${o.steps} steps after ${o.warmup} warm-up\n${tableHeader()}\n`,
  );
  let restarts = 0;
  try {
    for (const point of points) {
      for (const impl of impls) {
        const mode = impl === "switchyard" && o.graphs ? "graph" : "eager";
        progress.show(`${point.layout} ${point.tokens} tok ${impl}`);
        let result: ReturnType<typeof failedPoint>;
        if (impl === "nccl" && !nccl) {
          result = failedPoint(
            point,
            impl,
            "eager",
            `skipped: ${report.nccl.reason ?? "NCCL not initialised"}`,
          );
        } else {
          const opts: RankPointOptions = {
            config: point.config,
            warmup: o.warmup,
            steps: o.steps,
            rotate: o.rotate,
            seed: o.seed,
            graphs: mode === "graph",
            blocks: o.sms,
            maskedSms: o.maskedSms,
            timeoutMs: o.timeoutMs,
          };
          try {
            const ranksOut = await group.all<RankPointResult>(
              impl === "switchyard" ? "benchPoint" : "benchBaseline",
              () => opts,
              600_000,
            );
            result = aggregate(point, impl as "switchyard" | "nccl", mode, ranksOut, report.nvlink.minGBps);
            result.timing = ownTiming(impl as "switchyard" | "nccl", mode, o.steps);
          } catch (e) {
            result = failedPoint(point, impl, mode, `${(e as Error).name}: ${(e as Error).message}`);
          }
        }
        report.points.push(result);
        progress.clear();
        io.out(`${tableRow(result)}\n`);
        progress.tick();
        writeOutputs(o, report);
        if (group.failure && restarts < 2) {
          // A worker died or stopped answering: the rest of the sweep gets a fresh world.
          restarts++;
          await group.close();
          ({ group, nccl } = await startGroup(o, ranks, points, report, io, hooks, workers));
        }
      }
    }
  } finally {
    progress.clear();
    await group.close();
  }
  // The peers run after this library's workers are gone, so their buffers have the GPUs' memory.
  const perGpu = workers.ranksPerGpu ?? 1;
  report.peers = await sweepPeers({
    o,
    ranks,
    unavailable:
      ranks < 2 ? "the peers need 2 or more ranks" : perGpu > 1 ? "the peers need one GPU per rank" : null,
    points,
    nvlinkGBps: report.nvlink.minGBps,
    script: hooks.peerScript,
    onPoint: (p: PointResult) => {
      progress.show(`${p.layout} ${p.tokens} tok ${p.impl}`);
      report.points.push(p);
      progress.clear();
      io.out(`${tableRow(p)}\n`);
      progress.tick();
      writeOutputs(o, report);
    },
  });
  progress.clear();
  report.finishedAt = new Date().toISOString();
  writeOutputs(o, report);
  io.out(`\n${formatTable(sortedPoints(report.points))}\n\nbytes counted: ${BYTES_COUNTED}\n`);
  for (const line of peerNotes(report)) io.out(`${line}\n`);
  const dsLike = o.hidden === 7168 && o.experts === 256 && o.topK === 8 && o.dispatchDtype === "fp8-e4m3";
  if (dsLike)
    io.out(
      `\nprotocol v2 targets (${ranks} ranks; they are stated for a 1-rank world on one H200 / H100):\n${formatTargets(checkTargets(report))}\n`,
    );
  io.out(`\nwrote ${o.json} and ${o.svg} (and the Vega-Lite chart ${vegaLitePath(o.json)})\n`);
  // A peer's failure is reported in its rows, never the bench's exit status.
  return report.points.some(
    (p) => !isPeer(p.impl) && p.errors.length > 0 && !p.errors[0].startsWith("skipped"),
  )
    ? 1
    : 0;
}
