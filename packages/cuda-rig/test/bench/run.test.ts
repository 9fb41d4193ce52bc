import { describe, expect, it } from "vitest";
import { tempDir } from "../../../../test-support/tempDir.js";
import { type BenchIo, runBench } from "../../src/bench/run.js";

function io() {
  const out: string[] = [];
  const err: string[] = [];
  const b: BenchIo = {
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
    progress: { write: () => {}, interactive: false },
  };
  return { b, out, err };
}

describe("runBench without a GPU", () => {
  it("--help prints the usage and returns 0", async () => {
    const { b, out } = io();
    expect(await runBench(["--help"], { io: b })).toBe(0);
    expect(out.join("")).toMatch(/^switchyard bench \[options\]/);
  });

  it("a bad flag prints what is wrong and the usage, and returns 2", async () => {
    const { b, err } = io();
    expect(await runBench(["--steps", "0"], { io: b })).toBe(2);
    expect(err.join("")).toMatch(/--steps 0: expected an integer >= 1[\s\S]*switchyard bench \[options\]/);
  });

  it("without the native addon or a GPU it says why and returns 2", async () => {
    const { b, err } = io();
    const status = await runBench(["--quick"], { io: b });
    if (status === 2) expect(err.join("")).toMatch(/the CUDA backend cannot run here/);
    else expect(status).toBeTypeOf("number"); // a GPU machine with the addon: the bench ran
  }, 600_000);
});

describe("runBench orchestration with stand-in workers (no GPU)", () => {
  it("sweeps every point for ours and the baseline, survives a failed point and a dead worker, writes JSON and SVG", async () => {
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { fileURLToPath } = await import("node:url");
    const dir = tempDir("sy-bench-");
    const { b, out, err } = io();
    const status = await runBench(
      [
        "--ranks",
        "2",
        "--masked-tokens",
        "1,16,32",
        "--contiguous-tokens",
        "64,128",
        "--hidden",
        "256",
        "--experts",
        "16",
        "--steps",
        "20",
        "--warmup",
        "2",
        "--peers",
        "none",
        "--json",
        join(dir, "sub", "b.json"),
        "--svg",
        join(dir, "sub", "b.svg"),
      ],
      {
        io: b,
        hooks: {
          workerPath: fileURLToPath(new URL("../fixtures/fakeBenchWorker.mjs", import.meta.url)),
          gpus: 2,
          unavailableReason: async () => null,
        },
      },
    );
    expect(status).toBe(1); // two points failed
    const report = JSON.parse(readFileSync(join(dir, "sub", "b.json"), "utf8"));
    expect(report.schema).toBe("switchyard-bench/1");
    expect(report.finishedAt).not.toBeNull();
    expect(report.nvlink.peerWriteGBps).toEqual([350, 351]);
    expect(report.nccl).toEqual({ version: 22805, available: true, reason: null });
    expect(
      report.points.map(
        (p: { layout: string; tokens: number; impl: string }) => `${p.layout}:${p.tokens}:${p.impl}`,
      ),
    ).toEqual([
      "masked:1:switchyard",
      "masked:1:nccl",
      "masked:16:switchyard",
      "masked:16:nccl",
      "masked:32:switchyard",
      "masked:32:nccl",
      "contiguous:64:switchyard",
      "contiguous:64:nccl",
      "contiguous:128:switchyard",
      "contiguous:128:nccl",
    ]);
    const byKey = Object.fromEntries(
      report.points.map((p: { layout: string; tokens: number; impl: string }) => [
        `${p.layout}:${p.tokens}:${p.impl}`,
        p,
      ]),
    );
    expect(byKey["masked:16:switchyard"].errors[0]).toMatch(
      /WorkerExitError: rank 1: worker process exited \(exit code 7\)/,
    );
    // After the restart the sweep goes on with a fresh world, NCCL included.
    expect(byKey["masked:16:nccl"].errors).toEqual([]);
    expect(byKey["masked:32:switchyard"].phases.step.n).toBe(20);
    expect(byKey["contiguous:64:nccl"].errors[0]).toMatch(/SY_ERR_NCCL/);
    expect(byKey["contiguous:128:switchyard"].sms).toBe(24);
    // The slowest rank (rank 1, +1 us) of each step.
    expect(byKey["masked:1:switchyard"].phases.dispatchSend.min).toBeCloseTo(10.1 + 1, 10);
    const svg = readFileSync(join(dir, "sub", "b.svg"), "utf8");
    expect(svg.match(/<polyline data-series="masked\/switchyard"/g)).toHaveLength(2);
    const vl = JSON.parse(readFileSync(join(dir, "sub", "b.vl.json"), "utf8"));
    expect(vl.$schema).toMatch(/vega-lite\/v5/);
    // Every point without errors, three phases each: failed points are left out, not drawn as zero.
    const clean = report.points.filter((p: { errors: string[] }) => p.errors.length === 0).length;
    expect(vl.data.values).toHaveLength(3 * clean);
    expect(vl.data.values[0]).toEqual({
      layout: "masked",
      tokens: 1,
      impl: "switchyard",
      phase: "dispatch",
      medianUs: byKey["masked:1:switchyard"].phases.dispatch.median,
    });
    const text = out.join("");
    expect(text).toMatch(/peer-write 350 \/ 351 GB\/s, NCCL 22805/);
    expect(text.match(/^masked\s+1\s+switchyard/gm)).toHaveLength(2); // live row + final table
    expect(text).toMatch(/wrote .*b\.json and .*b\.svg/);
    expect(err.join("")).toBe("");
  }, 120_000);
});
