#!/usr/bin/env node
/**
 * GPU checks and benchmarks, for machines with the native addon and GPUs:
 *   node dist/cli.js checks [--ranks N] [--layout masked|contiguous] [--only i] [--blocks n] [--json out.json]
 *       graph replay checks against core's reference, missing-rank timeouts; --blocks: the endpoints'
 *       SM budget (1: the masked receive builds its tables first, as worlds over 8 ranks do)
 *   node dist/cli.js baseline [--ranks N] [--json out.json]   the NCCL baseline against core's reference
 *   node dist/cli.js deepseek [--ranks 4] [--replays 200] [--json out.json]
 *   node dist/cli.js bench ...                                  same as `switchyard bench ...`
 *   node dist/cli.js faults | soak | cycles | abi-fuzz | fuzz ...   robustness (checks/commands.ts)
 * `--help` lists every command and its flags (cliArgs.ts); an unknown command or flag, or a bad
 * --layout, is refused with the usage (exit 2).
 * Prints a table last; exits 1 if any check failed. Reads SWITCHYARD_CUDA_RANKS_PER_GPU and the
 * runtime variables (cudaOptionsFromEnv) once, here, and passes them to every command it runs.
 */
import { writeFileSync } from "node:fs";
import type { EpConfig } from "@switchyard/core";
import { cudaBackend, cudaUnavailableReason } from "./backend.js";
import { runBench } from "./bench/run.js";
import { runBaselineChecks } from "./checks/baselineRun.js";
import { robustnessCommand } from "./checks/commands.js";
import { baselineConfigs, checkConfigs } from "./checks/configs.js";
import { deepSeekConfig, median, runGraphCheck, runTimeoutChecks } from "./checks/run.js";
import { parseRigArgs, RIG_USAGE, RigUsageError } from "./cliArgs.js";
import type { WorkerSetup } from "./launcher.js";
import { backendOptionsFor, cudaOptionsFromEnv, workerSetupOf } from "./options.js";
import { drainPool } from "./pool.js";

/** The command line, read once (cliArgs.ts); a usage error ends the process before anything starts. */
const parsed = (() => {
  try {
    return parseRigArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof RigUsageError)) throw e;
    console.error(`${e.message}\n\n${RIG_USAGE}`);
    process.exit(2);
  }
})();

function arg(name: string, fallback: string): string {
  return parsed.help ? fallback : parsed.arg(name, fallback);
}

function describe(c: EpConfig): string {
  return `R${c.ranks} dp${c.dpSize} E${c.experts} K${c.topK} H${c.hidden} M${c.maxTokensPerRank} ${c.inputDtype}->${c.dispatchDtype}${c.layout === "contiguous" ? ` contiguous A${c.expertAlignment}` : ""}`;
}

async function checks(
  ranks: number,
  layout: "masked" | "contiguous",
  workers: WorkerSetup,
): Promise<{ ok: boolean; report: unknown }> {
  const rows: string[] = [];
  const report: unknown[] = [];
  let ok = true;
  const only = arg("only", "");
  const blocks = arg("blocks", "") === "" ? undefined : Number(arg("blocks", ""));
  for (const [i, c] of checkConfigs(ranks, layout).entries()) {
    if (only !== "" && Number(only) !== i) continue;
    // Both transports: stores into every peer's heap, and NVSHMEM puts to every other rank (the
    // path a peer on another host takes).
    for (const transport of ["direct", "put"] as const) {
      const r = await runGraphCheck(c, {
        seed: 100 + i,
        transport,
        warmup: 1,
        replays: 4,
        checkEvery: true,
        blocks,
        workers,
      });
      ok &&= r.ok;
      report.push(r);
      rows.push(
        `${r.ok ? "PASS" : "FAIL"} graph ${transport.padEnd(6)} ${describe(c)}${blocks ? ` blocks ${blocks}` : ""} (${r.results[0]?.replaysChecked ?? 0} replays checked per rank, ${r.wallMs} ms)${r.ok ? "" : `: ${r.errors.slice(0, 3).join(" | ")}`}`,
      );
    }
  }
  // The timeout checks run a 2-rank world: skipped where only one rank fits (one GPU, one rank per GPU).
  const fitsTwo = cudaBackend(backendOptionsFor(workers)).capabilities.maxRanks >= 2;
  const t = only === "" && fitsTwo ? await runTimeoutChecks(500, layout, workers) : [];
  for (const c of t) {
    ok &&= c.ok;
    rows.push(
      `${c.ok ? "PASS" : "FAIL"} timeout (${layout}): ${c.case}: ${c.detail.slice(0, 160)} after ${c.elapsedMs} ms`,
    );
  }
  report.push({ timeouts: t });
  await drainPool();
  console.log(rows.join("\n"));
  return { ok, report };
}

async function baseline(ranks: number, workers: WorkerSetup): Promise<{ ok: boolean; report: unknown }> {
  const out = await runBaselineChecks(baselineConfigs(ranks), { workers });
  const rows = out.map(
    (r) =>
      `${r.ok ? "PASS" : "FAIL"} nccl baseline ${describe(r.config)} (3 steps vs reference, ${r.wallMs} ms)${r.ok ? "" : `: ${r.errors.slice(0, 3).join(" | ")}`}`,
  );
  console.log(rows.length ? rows.join("\n") : "FAIL nccl baseline: no check ran");
  return { ok: out.length > 0 && out.every((r) => r.ok), report: out };
}

async function deepseek(
  ranks: number,
  replays: number,
  workers: WorkerSetup,
): Promise<{ ok: boolean; report: unknown }> {
  const config = deepSeekConfig(ranks);
  const r = await runGraphCheck(config, {
    seed: 7,
    warmup: 20,
    replays,
    checkEvery: false,
    peerWrite: { bytes: 256 * 2 ** 20, iters: 10 },
    workers,
  });
  const dMed = r.results.map((x) => median(x.dispatchMs));
  const cMed = r.results.map((x) => median(x.combineMs));
  const lines = [
    `DeepSeek-like step: ${describe(config)}, ${replays} graph replays after 20 warm-up, CUDA events`,
    "rank | dispatch median us | combine median us | remote dispatch MB | remote combine MB | peer-write GB/s",
  ];
  r.results.forEach((x, i) => {
    lines.push(
      `${i} | ${(dMed[i] * 1000).toFixed(1)} | ${(cMed[i] * 1000).toFixed(1)} | ${(x.remoteDispatchBytes / 1e6).toFixed(2)} | ${(x.remoteCombineBytes / 1e6).toFixed(2)} | ${r.peerWriteGBps?.[i]?.toFixed(1)}`,
    );
  });
  const bw = Math.min(...(r.peerWriteGBps ?? [Number.NaN]));
  const dBytes = Math.max(...r.results.map((x) => x.remoteDispatchBytes));
  const cBytes = Math.max(...r.results.map((x) => x.remoteCombineBytes));
  lines.push(
    `slowest rank: dispatch ${(Math.max(...dMed) * 1000).toFixed(1)} us (bandwidth floor ${((dBytes / (bw * 1e9)) * 1e6).toFixed(1)} us at ${bw.toFixed(0)} GB/s), ` +
      `combine ${(Math.max(...cMed) * 1000).toFixed(1)} us (floor ${((cBytes / (bw * 1e9)) * 1e6).toFixed(1)} us)`,
  );
  lines.push(
    `${r.ok ? "PASS" : "FAIL"} DeepSeek step checked against core's reference (eager + last replay)${r.ok ? "" : `: ${r.errors.slice(0, 3).join(" | ")}`}`,
  );
  console.log(lines.join("\n"));
  return {
    ok: r.ok,
    report: {
      ...r,
      summary: {
        dispatchMedianUs: dMed.map((v) => v * 1000),
        combineMedianUs: cMed.map((v) => v * 1000),
        peerWriteGBps: r.peerWriteGBps,
      },
    },
  };
}

async function main(): Promise<void> {
  // The one place this package reads the environment: ranks per GPU and the runtime options
  // every worker it launches (checks, bench, faults, soak, cycles, fuzz) is created with, passed
  // to each command below.
  if (parsed.help) {
    console.log(RIG_USAGE);
    process.exit(0);
  }
  const workers = workerSetupOf(cudaOptionsFromEnv(process.env));
  const cmd = parsed.command;
  if (cmd === "bench") {
    process.exit(await runBench(parsed.rest, { workers }));
  }
  const reason = await cudaUnavailableReason();
  if (reason !== null) {
    console.error(`cuda backend unavailable: ${reason}`);
    process.exit(2);
  }
  const robustness = await robustnessCommand(cmd, arg, workers);
  if (robustness !== null) process.exit(robustness.ok ? 0 : 1);
  const ranks = Number(arg("ranks", cmd === "deepseek" ? "4" : "2"));
  const layout = arg("layout", "masked") === "contiguous" ? "contiguous" : "masked"; // refused otherwise by parseRigArgs
  const out =
    cmd === "deepseek"
      ? await deepseek(ranks, Number(arg("replays", "200")), workers)
      : cmd === "baseline"
        ? await baseline(ranks, workers)
        : await checks(ranks, layout, workers);
  const json = arg("json", "");
  if (json) writeFileSync(json, JSON.stringify(out.report, null, 1));
  process.exit(out.ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
