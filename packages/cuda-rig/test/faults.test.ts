import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { expectedFailure, type RecoveryOutcome, runFaultCase } from "../src/checks/faults.js";
import { formatFault, runFaults } from "../src/checks/faultsRun.js";
import { checkedStep, World } from "../src/checks/world.js";
import { WorkerGroup } from "../src/launcher.js";

const fake = fileURLToPath(new URL("./fixtures/fakeFaultWorker.mjs", import.meta.url));
const launch = (ranks: number, env: Record<string, string>) =>
  WorkerGroup.launch({ ranks, env, workerPath: fake, failFast: false });

/** Recovery on stand-in workers: a fresh world opens and runs a step (nothing real to compare). */
async function recover(config: Parameters<typeof checkedStep>[1]): Promise<RecoveryOutcome> {
  const t0 = Date.now();
  const g = await WorkerGroup.launch({ ranks: config.ranks, workerPath: fake });
  try {
    const w = await World.open(g, config, 1000);
    const errors = await checkedStep(w, config, 1, { verify: false });
    return { ok: errors.length === 0, detail: "stand-in world", elapsedMs: Date.now() - t0 };
  } finally {
    await g.close();
  }
}

describe("rank-failure world orchestration (stand-in workers, no GPU)", () => {
  it("says where the other ranks notice each phase's fault", () => {
    expect(expectedFailure("dispatchSend")).toEqual({
      step: 1,
      call: "dispatchRecv",
      stage: "dispatch recv",
    });
    expect(expectedFailure("dispatchRecv")).toEqual({ step: 1, call: "combineRecv", stage: "combine recv" });
    expect(expectedFailure("combineSend")).toEqual({ step: 1, call: "combineRecv", stage: "combine recv" });
    expect(expectedFailure("combineRecv")).toEqual({ step: 2, call: "dispatchRecv", stage: "dispatch recv" });
    // contiguous: the survivors' own dispatch send waits for the victim's counts
    expect(expectedFailure("dispatchSend", "contiguous")).toEqual({
      step: 1,
      call: "dispatchRecv",
      stage: "dispatch send",
    });
    expect(expectedFailure("combineSend", "contiguous")).toEqual({
      step: 1,
      call: "combineRecv",
      stage: "combine recv",
    });
    expect(expectedFailure("combineRecv", "contiguous")).toEqual({
      step: 2,
      call: "dispatchRecv",
      stage: "dispatch send",
    });
  });

  it("runs every case in each layout asked for, the layout in the case's name", async () => {
    const out = await runFaults({
      ranks: 2,
      timeoutMs: 200,
      stallMs: 300,
      slackMs: 2000,
      layouts: ["masked", "contiguous"],
      phases: ["dispatchSend"],
      actions: ["kill"],
      launch,
      recover,
      verify: false,
    });
    expect(out.map((o) => [o.layout, o.expectedStage, o.ok])).toEqual([
      ["masked", "dispatch recv", true],
      ["contiguous", "dispatch send", true],
    ]);
    expect(out[1].case).toMatch(/^contiguous: kill rank 0 in dispatchSend/);
    for (const o of out) expect(o.problems, o.case).toEqual([]);
  });

  it("kills or stalls a victim in every phase; the others fail naming it and the stage; recovery runs", async () => {
    const lines: string[] = [];
    const out = await runFaults({
      ranks: 3,
      timeoutMs: 300,
      stallMs: 500,
      slackMs: 2000,
      launch,
      recover,
      verify: false,
      onCase: (o) => lines.push(formatFault(o)),
    });
    expect(out).toHaveLength(8);
    for (const o of out) {
      expect(o.problems, o.case).toEqual([]);
      expect(o.survivors).toHaveLength(2);
      for (const s of o.survivors) {
        expect(s.detail).toMatch(
          new RegExp(`TimeoutError: rank ${s.rank} waited 300 ms in ${o.expectedStage} for rank ${o.victim}`),
        );
        expect(s.elapsedMs).toBeGreaterThanOrEqual(290);
      }
      if (o.action === "kill")
        expect(o.victimReport).toMatch(
          new RegExp(
            `rank ${o.victim}: worker process exited \\(signal SIGKILL\\): while answering ${o.phase}`,
          ),
        );
      else expect(o.victimReport).toMatch(/stalled in/);
    }
    expect(out.map((o) => o.victim)).toEqual([1, 2, 0, 1, 2, 0, 1, 2]);
    expect(lines[0]).toMatch(
      /^PASS fault: masked: kill rank 1 in dispatchSend \(R3, timeout 300 ms\): 2 other rank\(s\) failed in dispatch recv naming rank 1/,
    );
  }, 120_000);

  it("reports a survivor that fails too late, and a world whose workers refuse the hook", async () => {
    const late = await runFaultCase("combineSend", "kill", 1, {
      ranks: 2,
      timeoutMs: 300,
      slackMs: -250,
      launch,
      recover,
      verify: false,
    });
    expect(late.ok).toBe(false);
    expect(late.problems[0]).toMatch(
      /^rank 0: TimeoutError: rank 0 waited 300 ms in combine recv for rank 1 after \d+ ms$/,
    );
    const noHooks = await runFaultCase("dispatchSend", "stall", 1, {
      ranks: 2,
      timeoutMs: 300,
      launch: (ranks) => WorkerGroup.launch({ ranks, workerPath: fake, failFast: false }),
      recover,
      verify: false,
    });
    expect(noHooks.ok).toBe(false);
    expect(noHooks.problems.join()).toMatch(/the world failed: Error: worker: test hooks are off/);
  }, 120_000);
});
