/**
 * Every runner the rig's command line dispatches to takes its worker setup (ranks per GPU, runtime
 * options) as an argument and hands it to the launch or the backend: no GPU needed, the launch is
 * stopped where it would start processes, the backend where it would be made.
 */
import { defineConfig } from "@switchyard/core";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { cudaBackend, cudaCapabilities } from "../src/backend.js";
import { runBench } from "../src/bench/run.js";
import { runBaselineChecks } from "../src/checks/baselineRun.js";
import { robustnessCommand } from "../src/checks/commands.js";
import { runCycles } from "../src/checks/cycles.js";
import { runFaultCase } from "../src/checks/faults.js";
import { recoverWithBackend, runFaults } from "../src/checks/faultsRun.js";
import { runGraphCheck, runTimeoutChecks } from "../src/checks/run.js";
import { runSoak } from "../src/checks/soakRun.js";
import { runTsFuzz } from "../src/checks/tsFuzz.js";
import { type LaunchOptions, WorkerGroup, type WorkerSetup } from "../src/launcher.js";
import { backendOptionsFor, cudaOptionsFromEnv, workerSetupOf } from "../src/options.js";

// Two GPUs "visible" here, whatever the machine has.
vi.mock("@switchyard/cuda", async (importOriginal) => ({
  ...(await importOriginal<typeof import("@switchyard/cuda")>()),
  visibleGpuCount: () => 2,
}));
// The real backend, its calls recorded.
vi.mock("../src/backend.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/backend.js")>();
  return { ...real, cudaBackend: vi.fn(real.cudaBackend) };
});

const STOP = "stopped before any worker started";
const native = { transport: "put", pointerChecks: false, contiguousBlocks: 8 } as const;
const workers: WorkerSetup = { ranksPerGpu: 2, native };
const config = defineConfig({ ranks: 2, experts: 4, topK: 2, hidden: 64, maxTokensPerRank: 4 });

let launch: MockInstance<(o: LaunchOptions) => Promise<WorkerGroup>>;
const backend = vi.mocked(cudaBackend);

beforeEach(() => {
  launch = vi.spyOn(WorkerGroup, "launch").mockRejectedValue(new Error(STOP));
  backend.mockClear();
});
afterEach(() => {
  launch.mockRestore();
});

/** The launch options of every WorkerGroup.launch so far. */
const launched = () => launch.mock.calls.map(([o]) => o);

/** Makes the next cudaBackend(options) record its options and throw instead of making a backend. */
function stopBackend(): void {
  backend.mockImplementationOnce(() => {
    throw new Error(STOP);
  });
}

describe("the worker setup is an argument, never a module-wide default", () => {
  it("the backend's capabilities use its ranksPerGpu, one rank per GPU without it", () => {
    expect(cudaCapabilities().maxRanks).toBe(2);
    expect(cudaBackend().capabilities.maxRanks).toBe(2);
    expect(cudaBackend({ ranksPerGpu: 3 }).capabilities.maxRanks).toBe(6);
    expect(cudaBackend(backendOptionsFor(workers)).capabilities.maxRanks).toBe(4);
    expect(cudaBackend(backendOptionsFor()).capabilities.maxRanks).toBe(2);
  });

  it("the command line's environment becomes a worker setup and back into backend options", () => {
    const setup = workerSetupOf(
      cudaOptionsFromEnv({ SWITCHYARD_CUDA_RANKS_PER_GPU: "2", SWITCHYARD_CUDA_POINTER_CHECKS: "0" }),
    );
    expect(setup).toEqual({ ranksPerGpu: 2, native: { pointerChecks: false } });
    expect(backendOptionsFor(setup)).toEqual({ ranksPerGpu: 2, runtime: { pointerChecks: false } });
    expect(workerSetupOf(cudaOptionsFromEnv({}))).toEqual({ ranksPerGpu: undefined, native: {} });
  });

  it("graph checks, the NCCL baseline, soak and cycles launch with the setup given, the defaults without", async () => {
    await expect(runGraphCheck(config, { workers })).rejects.toThrow(STOP);
    await expect(runBaselineChecks([config], { workers })).rejects.toThrow(STOP);
    await expect(runSoak({ ranks: 2, steps: 1, layouts: ["masked"], sets: 1, workers })).rejects.toThrow(
      STOP,
    );
    await expect(runCycles({ ranks: 2, count: 1, workers })).rejects.toThrow(STOP);
    expect(launched()).toHaveLength(4);
    for (const o of launched()) expect(o).toMatchObject({ ranks: 2, ranksPerGpu: 2, native });
    launch.mockClear();
    await expect(runGraphCheck(config)).rejects.toThrow(STOP);
    await expect(runCycles({ ranks: 2, count: 1 })).rejects.toThrow(STOP);
    expect(launched()).toHaveLength(2);
    for (const o of launched()) {
      expect(o.ranksPerGpu).toBeUndefined();
      expect(o.native).toBeUndefined();
    }
  });

  it("the fault world launches with the setup, its recovery's backend gets it too", async () => {
    await expect(
      runFaultCase("dispatchSend", "kill", 1, {
        ranks: 2,
        timeoutMs: 100,
        workers,
        recover: async () => ({ ok: true, detail: "", elapsedMs: 0 }),
      }),
    ).rejects.toThrow(STOP);
    expect(launched()).toEqual([
      expect.objectContaining({ ranks: 2, ranksPerGpu: 2, native, failFast: false }),
    ]);
    stopBackend();
    const r = await recoverWithBackend(config, 700, workers);
    expect(r).toMatchObject({ ok: false, detail: `Error: ${STOP}` });
    expect(backend.mock.calls).toEqual([[{ ranksPerGpu: 2, runtime: native }]]);
  });

  it("timeout checks and the TypeScript fuzz make their backend with the setup", async () => {
    stopBackend();
    await expect(runTimeoutChecks(100, "masked", workers)).rejects.toThrow(STOP);
    stopBackend();
    await expect(runTsFuzz({ numRuns: 1, maxRanks: 2, maxHidden: 64, workers })).rejects.toThrow(STOP);
    expect(backend.mock.calls).toEqual([
      [{ ranksPerGpu: 2, runtime: native }],
      [{ ranksPerGpu: 2, runtime: native }],
    ]);
  });

  it("the robustness commands hand the command line's setup to their runners", async () => {
    const given: Record<string, string> = { ranks: "2", sets: "1", steps: "1" };
    const arg = (name: string, fallback: string) => given[name] ?? fallback;
    for (const cmd of ["faults", "soak", "cycles"])
      await expect(robustnessCommand(cmd, arg, workers)).rejects.toThrow(STOP);
    expect(launched()).toHaveLength(3);
    for (const o of launched()) expect(o).toMatchObject({ ranks: 2, ranksPerGpu: 2, native });
    stopBackend();
    await expect(robustnessCommand("fuzz", arg, workers)).rejects.toThrow(STOP);
    expect(backend.mock.calls).toEqual([[{ ranksPerGpu: 2, runtime: native }]]);
  });

  it("runFaults passes the setup to every fault world", async () => {
    const r = runFaults({ ranks: 2, timeoutMs: 100, phases: ["dispatchSend"], actions: ["kill"], workers });
    await expect(r).rejects.toThrow(STOP);
    expect(launched()).toEqual([expect.objectContaining({ ranksPerGpu: 2, native })]);
  });

  it("the bench allows GPUs x ranksPerGpu ranks and launches its workers with the setup", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      out: (t: string) => void out.push(t),
      err: (t: string) => void err.push(t),
      progress: { write: () => {}, interactive: false },
    };
    const hooks = { gpus: 1, unavailableReason: async () => null };
    const argv = ["--ranks", "2", "--experts", "16", "--hidden", "256", "--quick", "--no-baseline"];
    expect(await runBench(argv, { io, hooks })).toBe(2);
    expect(err.join("")).toMatch(/2 ranks with 1 visible GPUs and 16 experts is not possible/);
    expect(launched()).toEqual([]);
    await expect(runBench(argv, { io, hooks, workers })).rejects.toThrow(STOP);
    expect(launched()).toEqual([expect.objectContaining({ ranks: 2, ranksPerGpu: 2, native })]);
  });
});
