import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConformanceReport } from "@switchyard/conformance";
import { PROPERTIES } from "@switchyard/conformance";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test-support/tempDir.js";
import { PROGRESS_INTERVAL_MS } from "../src/conformance.js";
import type { CliIo, InterruptSignal } from "../src/io.js";
import { runCli } from "../src/run.js";

interface Captured extends CliIo {
  stdout: string;
  stderr: string;
  /** The fake clock: `now()` returns it, then moves it on by `tick` ms. */
  clock: number;
  /** The command's SIGINT / SIGTERM handler while it is subscribed. */
  interrupt: ((signal: InterruptSignal) => void) | null;
}

function capture(
  options: { interactive?: boolean; tick?: number; onErr?: (io: Captured, text: string) => void } = {},
): Captured {
  const io: Captured = {
    stdout: "",
    stderr: "",
    clock: 0,
    interrupt: null,
    interactive: options.interactive ?? false,
    cwd: import.meta.dirname,
    out: (t) => {
      io.stdout += t;
    },
    err: (t) => {
      io.stderr += t;
      options.onErr?.(io, t);
    },
    now: () => {
      const t = io.clock;
      io.clock += options.tick ?? 0;
      return t;
    },
    onInterrupt: (handler) => {
      io.interrupt = handler;
      return () => {
        io.interrupt = null;
      };
    },
  };
  return io;
}

function tempJson(): string {
  return join(tempDir("switchyard-"), "report.json");
}

/** The progress lines a log gets while a property runs (not the per-property ones). */
function progressLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.startsWith("  "));
}

describe("switchyard command line", () => {
  it("prints help", async () => {
    const io = capture();
    expect(await runCli(["--help"], io)).toBe(0);
    expect(io.stdout).toContain("switchyard conformance");
  });

  it("lists the properties", async () => {
    const io = capture();
    expect(await runCli(["conformance", "--list"], io)).toBe(0);
    expect(io.stdout).toContain("dispatch/rows");
    expect(io.stdout).toContain("gated");
  });

  it("runs the suite against the reference, with a table, progress and JSON", async () => {
    const io = capture();
    const json = tempJson();
    const status = await runCli(
      [
        "conformance",
        "--backend",
        "reference",
        "--only",
        "dispatch/rows,input/*",
        "--runs",
        "3",
        "--json",
        json,
      ],
      io,
    );
    expect(status).toBe(0);
    expect(io.stdout).toMatch(/PASS\s+dispatch\/rows/);
    expect(io.stderr).toMatch(/\[ ?\d+\/\d+\] PASS input\/rank/);
    const report = JSON.parse(await readFile(json, "utf8")) as ConformanceReport;
    expect(report.ok).toBe(true);
    expect(report.interrupted).toBe(false);
    expect(report.results.map((r) => r.name)).toContain("input/shape");
  });

  it("loads a backend module by path (export `backend`)", async () => {
    const io = capture();
    const status = await runCli(
      ["conformance", "--backend", "./fixtures/backendModule.mjs", "--only", "session"],
      io,
    );
    expect(status).toBe(0);
    expect(io.stdout).toContain("fixture-module");
  });

  it("exits 1 and prints seed, path and the replay command when a property fails", async () => {
    const io = capture();
    const args = ["conformance", "--backend", "./fixtures/factoryModule.mjs", "--only", "combine/accuracy"];
    expect(await runCli([...args, "--seed", "5"], io)).toBe(1);
    expect(io.stdout).toMatch(/FAIL\s+combine\/accuracy/);
    const replay = io.stdout.match(/--seed (\d+) --path ([\d:]+)/);
    expect(replay).not.toBeNull();
    const again = capture();
    expect(await runCli([...args, "--seed", replay![1], "--path", replay![2]], again)).toBe(1);
    expect(again.stdout).toMatch(/failed after 1 run/);
  });

  it("exits 2 for an unavailable backend, 0 with --allow-unavailable", async () => {
    const args = ["conformance", "--backend", "./fixtures/unavailableModule.mjs", "--only", "dispatch/rows"];
    const io = capture();
    expect(await runCli(args, io)).toBe(2);
    expect(io.stderr).toContain("unavailable: no device here");
    expect(io.stdout).toContain("not run: 1 property skipped, the backend is unavailable");
    expect(await runCli([...args, "--allow-unavailable"], capture())).toBe(0);
  });

  it("exits 2 on bad usage and unloadable modules", async () => {
    expect(await runCli(["conformance", "--bogus"], capture())).toBe(2);
    expect(await runCli(["conformance", "--backend", "./fixtures/emptyModule.mjs"], capture())).toBe(2);
    expect(await runCli(["nonsense"], capture())).toBe(2);
  });
});

describe("switchyard command line: usage errors exit 2 before anything runs", () => {
  async function refused(args: string[]): Promise<Captured> {
    const io = capture();
    expect(await runCli(args, io)).toBe(2);
    expect(io.stderr).not.toMatch(/PASS|FAIL|SKIP/);
    expect(io.stdout).toBe("");
    return io;
  }

  it("--only matching no property names it and lists the properties", async () => {
    const io = await refused(["conformance", "--only", "dispatch/rowz"]);
    expect(io.stderr).toContain('--only dispatch/rowz: "dispatch/rowz" matches no property');
    expect(io.stderr).toContain("dispatch/rows, dispatch/payload");
  });

  it("--path without --only and --seed, or with --only selecting several", async () => {
    for (const args of [
      ["--path", "1:2"],
      ["--path", "1:2", "--only", "dispatch/rows"],
      ["--path", "1:2", "--only", "dispatch", "--seed", "3"],
    ]) {
      const io = await refused(["conformance", ...args]);
      expect(io.stderr).toContain(
        "--path replays one failure: give it with --only <one property> and --seed",
      );
    }
  });

  it("an unwritable --json path, checked before the run", async () => {
    const dir = tempDir("switchyard-");
    const io = await refused(["conformance", "--json", join(dir, "no", "such", "report.json")]);
    expect(io.stderr).toMatch(/--json .*report\.json: folder .* does not exist/);
    const folder = await refused(["conformance", "--json", dir]);
    expect(folder.stderr).toContain("is a folder; give a file name");
  });

  it("a bad --runs or --seed names the flag", async () => {
    expect((await refused(["conformance", "--runs", "0"])).stderr).toContain(
      '--runs must be a positive integer, got "0"',
    );
    expect((await refused(["conformance", "--seed", "x"])).stderr).toContain(
      '--seed must be an integer, got "x"',
    );
  });

  it("an unknown backend name lists the known ones", async () => {
    const io = await refused(["conformance", "--backend", "webgpuu"]);
    expect(io.stderr).toContain('unknown backend "webgpuu": the known names are reference, webgpu, cuda');
  });

  it("malformed capabilities: the field and what is allowed", async () => {
    const io = await refused(["conformance", "--backend", "./fixtures/badCapabilitiesModule.mjs"]);
    expect(io.stderr).toContain("backend fixture-bad-caps declares bad capabilities");
    expect(io.stderr).toContain("maxTopK = undefined: an integer in [1, 4096]");
    expect(io.stderr).toContain(
      'layouts = ["masked","packed"]: a non-empty array of distinct values from "masked", "contiguous"',
    );
  });
});

describe("switchyard command line: what it prints", () => {
  it("--version prints the package's version", async () => {
    const io = capture();
    expect(await runCli(["--version"], io)).toBe(0);
    const pkg = JSON.parse(await readFile(join(import.meta.dirname, "..", "package.json"), "utf8"));
    expect(io.stdout).toBe(`switchyard ${pkg.version}\n`);
  });

  it("an unavailable backend: its reason first and once, no SKIP lines", async () => {
    const io = capture();
    const args = ["conformance", "--backend", "./fixtures/unavailableModule.mjs"];
    expect(await runCli(args, io)).toBe(2);
    expect(io.stderr.split("\n")[0]).toBe(
      "backend fixture-unavailable is unavailable: no device here; run on a machine with one",
    );
    expect(io.stderr.match(/no device here/g)).toHaveLength(1);
    expect(`${io.stdout}${io.stderr}`).not.toContain("SKIP");
    expect(io.stdout).toBe(
      `fixture-unavailable: not run: ${PROPERTIES.length} properties skipped, the backend is unavailable\n`,
    );
  });

  it("one bug: one first failure, later ones with the same error collapsed, replays start with npx", async () => {
    const io = capture();
    const args = ["conformance", "--backend", "./fixtures/factoryModule.mjs", "--seed", "5"];
    expect(
      await runCli([...args, "--only", "input/rank,input/unexpected-scales,input/expert-output"], io),
    ).toBe(1);
    expect(io.stdout.match(/FIRST FAILURE/g)).toHaveLength(1);
    expect(io.stdout).toContain("3 failed, 1 distinct error");
    expect(io.stdout).toContain(
      "the same error also failed 2 more: input/unexpected-scales, input/expert-output",
    );
    expect(io.stdout.match(/^ {2}step with the bad call/gm)).toHaveLength(1);
    expect(io.stdout).toMatch(
      /^ {2}replay: npx switchyard conformance --backend \.\/fixtures\/factoryModule\.mjs --only input\/rank --seed 5/m,
    );
  });

  it("problem lines that differ only in the rank are one line naming the ranks", async () => {
    const { collapseRanks } = await import("../src/failures.js");
    const error = [
      "2 problem(s)",
      "  rank 3 token 0: y = 1",
      "  rank 3 token 1: y = 2",
      "  rank 4 token 0: y = 1",
      "  rank 4 token 1: y = 2",
      "  rank 5 token 0: y = 9",
    ].join("\n");
    expect(collapseRanks(error).split("\n")).toEqual([
      "2 problem(s)",
      "  ranks 3, 4 token 0: y = 1",
      "  ranks 3, 4 token 1: y = 2",
      "  rank 5 token 0: y = 9",
    ]);
  });
});

describe("switchyard conformance progress in a log", () => {
  // The fake clock moves 1 s at every reading, and the progress reads it once per run.
  const second = 1000;

  it("prints a line every PROGRESS_INTERVAL_MS of a long property, none in between", async () => {
    expect(PROGRESS_INTERVAL_MS).toBe(15 * second);
    const io = capture({ tick: second });
    const args = ["conformance", "--only", "dispatch/rows", "--runs", "40", "--seed", "3"];
    expect(await runCli(args, io)).toBe(0);
    // Start at 0 s, run k at k s: lines at runs 15 and 30, nothing at 1-14, 16-29 or 31-40.
    expect(progressLines(io.stderr)).toEqual([
      "  dispatch/rows: 15/40 runs, 15 s",
      "  dispatch/rows: 30/40 runs, 30 s",
    ]);
    expect(io.stderr).toMatch(/\[ 1\/1\] PASS dispatch\/rows \d+ ms\n$/);
  });

  it("prints none for a property that ends sooner, and restarts the interval for each property", async () => {
    const io = capture({ tick: second });
    const args = ["conformance", "--only", "session/layout,dispatch/rows", "--runs", "14", "--seed", "3"];
    expect(await runCli(args, io)).toBe(0);
    // 14 runs of 1 s each, twice: 28 s in all, but neither property reaches 15 s.
    expect(progressLines(io.stderr)).toEqual([]);
    expect(io.stderr).toMatch(/\[ 2\/2\] PASS dispatch\/rows/);
  });

  it("keeps the live line on a terminal", async () => {
    const io = capture({ interactive: true, tick: second });
    expect(await runCli(["conformance", "--only", "dispatch/rows", "--runs", "20"], io)).toBe(0);
    expect(io.stderr).toContain("\r\x1b[K[ 1/1] dispatch/rows  case 20/20");
    expect(progressLines(io.stderr)).toEqual([]);
  });
});

describe("switchyard conformance interrupted", () => {
  const only = "session/layout,dispatch/rows,dispatch/payload,combine/accuracy";

  /** Sends `signal` once the log shows `line` (a progress line: a run has just started). */
  function interruptAt(line: string, signal: InterruptSignal, tick = 1000): Captured {
    return capture({
      tick,
      onErr: (io, text) => {
        if (text.includes(line)) io.interrupt?.(signal);
      },
    });
  }

  it("on SIGTERM reports what finished, the interrupted property (not a pass), writes the JSON, exits 143", async () => {
    const io = interruptAt("dispatch/payload: 15/40 runs", "SIGTERM");
    const json = tempJson();
    const status = await runCli(["conformance", "--only", only, "--runs", "40", "--json", json], io);
    expect(status).toBe(143);
    expect(io.interrupt).toBeNull(); // the handler is unsubscribed
    const report = JSON.parse(await readFile(json, "utf8")) as ConformanceReport;
    expect(report.interrupted).toBe(true);
    expect(report.ok).toBe(false);
    expect(report.results.map((r) => [r.name, r.status])).toEqual([
      ["session/layout", "pass"],
      ["dispatch/rows", "pass"],
    ]);
    expect(report.counts).toEqual({ pass: 2, fail: 0, skip: 0 });
    const i = report.interruption!;
    expect(i.reason).toBe("SIGTERM");
    expect(i.property).toMatchObject({
      name: "dispatch/payload",
      status: "interrupted",
      runs: 15,
      passed: 14,
      numRuns: 40,
    });
    expect(i.property!.failedRun).toBeUndefined();
    expect(i.notRun).toEqual(["combine/accuracy"]);
    // Printed: the table of what finished, then the interrupted property.
    expect(io.stdout).toMatch(/PASS\s+session\/layout/);
    expect(io.stdout).toMatch(/PASS\s+dispatch\/rows/);
    expect(io.stdout).not.toMatch(/PASS\s+dispatch\/payload/);
    expect(io.stdout).toContain(
      "INTERRUPTED by SIGTERM: dispatch/payload: 14 of 40 runs passed before the interruption",
    );
    expect(io.stdout).toContain("not run (1): combine/accuracy");
    expect(io.stderr).not.toMatch(/PASS dispatch\/payload/);
  });

  it("on SIGINT exits 130; a failure found before the interruption is reported, with its rerun", async () => {
    // Every reading is a whole interval on, so every run prints a line: stop at the first shrink.
    const io = interruptAt("a case failed, shrinking it", "SIGINT", PROGRESS_INTERVAL_MS);
    const json = tempJson();
    const args = ["conformance", "--backend", "./fixtures/factoryModule.mjs", "--only", "combine/accuracy"];
    expect(await runCli([...args, "--seed", "5", "--json", json], io)).toBe(130);
    const report = JSON.parse(await readFile(json, "utf8")) as ConformanceReport;
    expect(report.interrupted).toBe(true);
    expect(report.results).toEqual([]);
    const p = report.interruption!.property!;
    expect(p).toMatchObject({ name: "combine/accuracy", status: "interrupted", seed: 5 });
    expect(p.failedRun).toBeGreaterThanOrEqual(1);
    expect(p.passed).toBe(p.failedRun! - 1);
    expect(p.error).toMatch(/combine|bound|expected/);
    expect(p.replay).toBe("--only combine/accuracy --seed 5");
    expect(io.stdout).toContain("interrupted while shrinking it");
    expect(io.stdout).toContain(
      "rerun: npx switchyard conformance --backend ./fixtures/factoryModule.mjs --only combine/accuracy --seed 5",
    );
  });
});

describe("switchyard demo", () => {
  async function demo(args: string[]): Promise<{ status: number; io: Captured }> {
    const io = capture();
    return { status: await runCli(["demo", ...args], io), io };
  }

  it("runs one step on the backend asked for and writes the picture", async () => {
    const out = join(tempDir("switchyard-"), "demo.svg");
    const { status, io } = await demo([
      "--backend",
      "reference",
      "--ranks",
      "8",
      "--experts",
      "16",
      "--out",
      out,
    ]);
    expect(status).toBe(0);
    expect(io.stdout).toContain("backend reference: one step");
    expect(io.stdout).toContain("matches the reference");
    expect(await readFile(out, "utf8")).toMatch(/^<svg/);
  });

  it("refuses an unknown backend, listing the known ones, and runs nothing", async () => {
    const { status, io } = await demo(["--backend", "bogus"]);
    expect(status).toBe(2);
    expect(io.stderr).toContain('unknown backend "bogus": the known names are reference, webgpu, cuda');
    expect(io.stdout).toBe("");
  });

  it("refuses a backend that cannot run here, with its reason, instead of running another", async () => {
    const { status, io } = await demo(["--backend", "./fixtures/unavailableModule.mjs"]);
    expect(status).toBe(2);
    expect(io.stderr).toContain("backend fixture-unavailable is unavailable: no device here");
    expect(io.stdout).toBe("");
  });

  it("speaks of flags, not config fields", async () => {
    const bad = await demo(["--ranks", "x"]);
    expect(bad.status).toBe(2);
    expect(bad.io.stderr).toContain('--ranks must be a positive integer, got "x"');
    const rule = await demo(["--experts", "30"]);
    expect(rule.status).toBe(2);
    expect(rule.io.stderr).toContain("--experts 30: must be a multiple of --ranks (4)");
    expect(rule.io.stderr).not.toMatch(/EpConfig|maxTokensPerRank|dpSize/);
    const dp = await demo(["--dp", "3"]);
    expect(dp.io.stderr).toContain("--dp 3: must divide --ranks (4)");
  });

  it("runs a step with --combine-weights home (weights at combineRecv) and refuses it with --layout contiguous", async () => {
    const out = join(tempDir("switchyard-"), "demo.svg");
    const home = await demo(["--backend", "reference", "--combine-weights", "home", "--out", out]);
    expect(home.status).toBe(0);
    expect(home.io.stdout).toContain("matches the reference");
    const bad = await demo(["--backend", "reference", "--combine-weights", "home", "--layout", "contiguous"]);
    expect(bad.status).toBe(2);
    expect(bad.io.stderr).toContain('--combine-weights home: "home" needs the masked layout');
    const typo = await demo(["--backend", "reference", "--combine-weights", "Home"]);
    expect(typo.status).toBe(2);
    expect(typo.io.stderr).toContain("--combine-weights Home: must be one of expert, home");
  });

  it("refuses an --out path that cannot be written before the step", async () => {
    const { status, io } = await demo(["--backend", "reference", "--out", "/no/such/folder/demo.svg"]);
    expect(status).toBe(2);
    expect(io.stderr).toContain("--out /no/such/folder/demo.svg: folder /no/such/folder does not exist");
    expect(io.stdout).toBe("");
  });
});
