import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../src/cli/io.js";
import { runCli } from "../src/cli/run.js";
import type { ConformanceReport } from "../src/index.js";

function capture(): CliIo & { stdout: string; stderr: string } {
  const io = {
    stdout: "",
    stderr: "",
    interactive: false,
    cwd: import.meta.dirname,
    out: (t: string) => {
      io.stdout += t;
    },
    err: (t: string) => {
      io.stderr += t;
    },
  };
  return io;
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
    const json = join(await mkdtemp(join(tmpdir(), "switchyard-")), "report.json");
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
    expect(io.stdout).toMatch(/SKIP\s+dispatch\/rows/);
    expect(await runCli([...args, "--allow-unavailable"], capture())).toBe(0);
  });

  it("exits 2 on bad usage and unloadable modules", async () => {
    expect(await runCli(["conformance", "--bogus"], capture())).toBe(2);
    expect(await runCli(["conformance", "--path", "1:2"], capture())).toBe(2);
    expect(await runCli(["conformance", "--backend", "./fixtures/emptyModule.mjs"], capture())).toBe(2);
    expect(await runCli(["nonsense"], capture())).toBe(2);
  });
});
