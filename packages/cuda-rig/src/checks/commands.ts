import { writeFileSync } from "node:fs";
import { visibleGpuCount } from "@switchyard/cuda";
import type { WorkerSetup } from "../launcher.js";
import { drainPool } from "../pool.js";
import { formatAbiFuzz, runAbiFuzz } from "./abiFuzz.js";
import { formatCycles, runCycles } from "./cycles.js";
import { formatFault, runFaults } from "./faultsRun.js";
import { formatSoak, runSoak } from "./soakRun.js";
import { runTsFuzz } from "./tsFuzz.js";

/** Reads `--name value` from argv (or the fallback). */
export type ArgReader = (name: string, fallback: string) => string;

function num(arg: ArgReader, name: string, fallback: number): number {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`--${name} ${arg(name, "")} is not a number >= 0`);
  return v;
}

/**
 * The robustness checks on a GPU (README "Faults, bad input, long runs"); each prints its table and returns
 * ok plus the JSON report:
 *   faults   [--ranks N] [--timeout-ms 1000] [--layouts masked,contiguous]   a rank killed / stalled in each phase, recovery
 *   soak     [--steps 100000] [--ranks N] [--sets 64] [--chunk 2500] [--max-seconds S]
 *   cycles   [--count 1000] [--ranks N]             session create / destroy, leak verdict after warm-up
 *   abi-fuzz [--seed 1] [--iterations 400]          build/abi_fuzz against a reference case
 *   fuzz     [--runs 30] [--max-ranks N] [--max-hidden 512] [--seed S]   conformance's fuzzBackend
 * Every worker they start (faults, soak, cycles, fuzz) starts as `workers` says: the ranks per GPU
 * and runtime options the command line's environment asked for. Returns null for another command.
 */
export async function robustnessCommand(
  cmd: string,
  arg: ArgReader,
  workers: WorkerSetup,
): Promise<{ ok: boolean; report: unknown } | null> {
  const ranks = () => num(arg, "ranks", visibleGpuCount());
  const json = arg("json", "");
  const save = (report: unknown) => {
    if (json) writeFileSync(json, JSON.stringify(report, null, 1));
  };
  switch (cmd) {
    case "faults": {
      const layouts = arg("layouts", "masked,contiguous").split(",");
      for (const l of layouts)
        if (l !== "masked" && l !== "contiguous")
          throw new RangeError(`--layouts: ${l} is not a layout (masked, contiguous)`);
      const out = await runFaults({
        ranks: ranks(),
        layouts: layouts as ("masked" | "contiguous")[],
        timeoutMs: num(arg, "timeout-ms", 1000),
        workers,
        onCase: (o, i, n) => console.log(`[${i + 1}/${n}] ${formatFault(o)}`),
      });
      const ok = out.length > 0 && out.every((o) => o.ok);
      const detected = out.reduce((n, o) => n + o.survivors.filter((s) => s.ok).length, 0);
      console.log(
        `${ok ? "PASS" : "FAIL"} faults: ${out.length} faults injected, ${out.filter((o) => o.ok).length} handled as documented; ` +
          `${detected} rank errors naming the missing rank and stage; ${out.filter((o) => o.recovery.ok).length} recoveries bit-exact`,
      );
      save(out);
      return { ok, report: out };
    }
    case "soak": {
      const r = await runSoak({
        ranks: ranks(),
        steps: num(arg, "steps", 100_000),
        layouts: ["masked", "contiguous"],
        sets: num(arg, "sets", 64),
        chunk: num(arg, "chunk", 2500),
        maxSeconds: arg("max-seconds", "") ? num(arg, "max-seconds", 0) : undefined,
        workers,
        onProgress: (p) => {
          process.stderr.write(
            `soak: ${p.stepsDone}/${p.stepsRequested} steps, ${p.stepsPerSecond.toFixed(0)} steps/s, ${p.mismatchedSteps} mismatched\n`,
          );
          save(p);
        },
      });
      console.log(formatSoak(r));
      save(r);
      return { ok: r.ok, report: r };
    }
    case "cycles": {
      const r = await runCycles({
        ranks: ranks(),
        count: num(arg, "count", 1000),
        workers,
        onProgress: (done, total) => process.stderr.write(`cycles: ${done}/${total}\n`),
      });
      console.log(formatCycles(r));
      save(r);
      return { ok: r.ok, report: r };
    }
    case "abi-fuzz": {
      const r = await runAbiFuzz({ seed: num(arg, "seed", 1), iterations: num(arg, "iterations", 400) });
      console.log(formatAbiFuzz(r));
      save(r);
      return { ok: r.ok, report: r };
    }
    case "fuzz": {
      const seed = arg("seed", "");
      const r = await runTsFuzz({
        numRuns: num(arg, "runs", 30),
        seed: seed ? Number(seed) : undefined,
        maxRanks: num(arg, "max-ranks", visibleGpuCount()),
        maxHidden: num(arg, "max-hidden", 512),
        workers,
      });
      console.log(r.text);
      save(r.report);
      await drainPool();
      return { ok: r.ok, report: r.report };
    }
    default:
      return null;
  }
}
