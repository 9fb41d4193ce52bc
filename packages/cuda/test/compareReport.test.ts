import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

// bench/compare/report.mjs on made-up bench JSON: the median of each side's rounds, any two sides
// (--base / --head), two libraries of the same runs (NAME@IMPL), the SVG, and an error naming a side
// with no runs.
const report = join(import.meta.dirname, "..", "bench", "compare", "report.mjs");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A bench JSON with one Switchyard point whose phases all have the given median (NCCL's: ncclUs). */
function run(dir: string, side: string, round: number, us: number, ncclUs = us) {
  const phasesOf = (v: number) =>
    Object.fromEntries(
      ["dispatchSend", "dispatchRecv", "combineSend", "combineRecv", "step"].map((p) => [p, { median: v }]),
    );
  const phases = phasesOf(us);
  const json = {
    device: { name: "Test GPU", gpus: 2 },
    commit: "0000000",
    command: "switchyard bench",
    points: [
      { impl: "switchyard", layout: "contiguous", tokens: 4096, phases },
      { impl: "nccl", layout: "contiguous", tokens: 4096, phases: phasesOf(ncclUs) },
    ],
  };
  writeFileSync(join(dir, `compare-${side}-${round}.json`), JSON.stringify(json));
}

function folder() {
  const d = mkdtempSync(join(tmpdir(), "compare-report-"));
  dirs.push(d);
  return d;
}

describe("compare/report.mjs", () => {
  it("compares base and head by the median of their rounds", () => {
    const d = folder();
    for (const [r, us] of [
      [1, 100],
      [2, 104],
      [3, 101],
    ])
      run(d, "base", r, us);
    for (const [r, us] of [
      [1, 90],
      [2, 95],
      [3, 91],
    ])
      run(d, "head", r, us);
    const out = spawnSync(process.execPath, [report, d], { encoding: "utf8" });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain("Test GPU x 2; 3 rounds each");
    expect(out.stdout).toContain("| point | phase | base | head | head - base | each round |");
    // Round i of one side against round i of the other (run.sh alternates them).
    expect(out.stdout).toContain(
      "| contiguous 4096 | combineSend | 101.0 | 91.0 | -10.0 | -10.0 / -9.0 / -10.0 |",
    );
  });

  it("compares any two sides, and draws the SVG", () => {
    const d = folder();
    run(d, "base", 1, 100);
    run(d, "head", 1, 100);
    run(d, "ring-a", 1, 112.5);
    const svg = join(d, "ring-a.svg");
    const out = spawnSync(process.execPath, [report, d, svg, "--base", "head", "--head", "ring-a"], {
      encoding: "utf8",
    });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain("| point | phase | head | ring-a | ring-a - head | each round |");
    expect(out.stdout).toContain("| contiguous 4096 | step | 100.0 | 112.5 | +12.5 | +12.5 |");
    const picture = readFileSync(svg, "utf8");
    expect(picture).toContain("ring-a − head per phase");
    expect(picture).toContain("+12.5 µs (100.0 → 112.5)");
  });

  it("compares two libraries measured in the same rounds (NAME@IMPL)", () => {
    const d = folder();
    run(d, "peers", 1, 20, 22);
    run(d, "peers", 2, 21, 21.5);
    const args = [report, d, "--base", "peers@nccl", "--head", "peers@switchyard"];
    const out = spawnSync(process.execPath, args, { encoding: "utf8" });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain("| contiguous 4096 | step | 21.8 | 20.5 | -1.3 | -2.0 / -0.5 |");
    const none = spawnSync(process.execPath, [report, d, "--base", "peers@pplx", "--head", "peers"], {
      encoding: "utf8",
    });
    expect(none.status).not.toBe(0);
    expect(none.stderr).toContain("no pplx rows with phases");
  });

  it("refuses a flag without a side's name", () => {
    const d = folder();
    run(d, "base", 1, 100);
    run(d, "head", 1, 100);
    const out = spawnSync(process.execPath, [report, d, "--head"], { encoding: "utf8" });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain("--head needs a side's name");
  });

  it("pairs the rounds by number (10 after 9), and has no rounds' column where the sides ran different rounds", () => {
    const d = folder();
    for (let r = 1; r <= 10; r++) {
      run(d, "base", r, 100);
      run(d, "head", r, r === 10 ? 107 : 100);
    }
    run(d, "other", 1, 100);
    const out = spawnSync(process.execPath, [report, d], { encoding: "utf8" });
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toContain(
      "| contiguous 4096 | step | 100.0 | 100.0 | +0.0 | +0.0 / +0.0 / +0.0 / +0.0 / +0.0 / +0.0 / +0.0 / +0.0 / +0.0 / +7.0 |",
    );
    const uneven = spawnSync(process.execPath, [report, d, "--head", "other"], { encoding: "utf8" });
    expect(uneven.status, uneven.stderr).toBe(0);
    expect(uneven.stdout).toContain("| contiguous 4096 | step | 100.0 | 100.0 | +0.0 | — |");
  });

  it("names a side that has no runs", () => {
    const d = folder();
    run(d, "base", 1, 100);
    run(d, "head", 1, 100);
    const out = spawnSync(process.execPath, [report, d, "--head", "missing"], { encoding: "utf8" });
    expect(out.status).not.toBe(0);
    expect(out.stderr).toContain("no compare-missing-<round>.json");
  });
});
