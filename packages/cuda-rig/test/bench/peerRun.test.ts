import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../../test-support/tempDir.js";
import { type BenchIo, runBench } from "../../src/bench/run.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

function io() {
  const out: string[] = [];
  const b: BenchIo = {
    out: (t) => void out.push(t),
    err: () => {},
    progress: { write: () => {}, interactive: false },
  };
  return { b, out };
}

async function bench(dir: string, extra: string[], ranksPerGpu = 1) {
  const { b, out } = io();
  const status = await runBench(
    [
      ...["--ranks", "2", "--masked-tokens", "1,8,16,32", "--contiguous-tokens", "64"],
      ...["--hidden", "256", "--experts", "16", "--steps", "6", "--warmup", "1", "--rotate", "2"],
      ...["--python", process.execPath, "--peer-timeout-s", "2"],
      ...["--json", join(dir, "b.json"), "--svg", join(dir, "b.svg"), ...extra],
    ],
    {
      io: b,
      workers: { ranksPerGpu },
      hooks: {
        workerPath: fixture("fakeBenchWorker.mjs"),
        peerScript: fixture("fakePeers.mjs"),
        gpus: 2,
        unavailableReason: async () => null,
      },
    },
  );
  return { status, out: out.join(""), report: JSON.parse(readFileSync(join(dir, "b.json"), "utf8")) };
}

type Row = {
  layout: string;
  tokens: number;
  impl: string;
  errors: string[];
  phases: Record<string, unknown>;
};

describe("runBench with peer libraries (stand-in peer script, no GPU)", () => {
  it("adds a row per peer and point: measured, failed, timed out or skipped; never fails the bench for them", async () => {
    const dir = tempDir("sy-bench-peers-");
    const { status, out, report } = await bench(dir, ["--no-baseline"]);
    // The stand-in worker kills masked 16 of ours: that alone makes the status 1.
    expect(status).toBe(1);
    const rows = new Map<string, Row>(
      report.points.map((p: Row) => [`${p.layout}:${p.tokens}:${p.impl}`, p]),
    );
    const ll = (t: number) => rows.get(`masked:${t}:deepep-ll`)!;
    expect(Object.keys(ll(1).phases)).toHaveLength(7);
    expect(ll(8).errors).toEqual([]);
    expect(ll(16).errors).toEqual(["skipped: rank 1 (masked 16): RuntimeError: boom"]);
    expect(ll(32).errors[0]).toMatch(/^skipped: deepep-ll stopped: rank 1 \(masked 16\)/);
    expect(rows.get("contiguous:64:deepep-ht")!.errors[0]).toMatch(
      /^skipped: deepep-ht did not finish within --peer-timeout-s 2/,
    );
    for (const t of [1, 8, 16, 32])
      expect(rows.get(`masked:${t}:pplx`)!.errors).toEqual([
        "skipped: ModuleNotFoundError: No module named 'pplx_kernels'",
      ]);
    const caller = rows.get("contiguous:64:deepep-ht-caller")!;
    expect(caller).toMatchObject({ mode: "eager", sms: 24, errors: [], memory: { deviceBytes: 3e8 } });
    expect(Object.keys(caller.phases)).toEqual(["dispatch", "combine", "step"]);
    for (const t of [1, 8, 16, 32]) {
      const py = rows.get(`masked:${t}:switchyard-py`)!;
      expect(py).toMatchObject({ mode: "graph", sms: 132, errors: [], memory: { deviceBytes: 2e8 } });
      expect(py.phases.dispatchSend).toMatchObject({ median: 4 });
    }
    expect(report.points.filter((p: Row) => p.impl !== "switchyard")).toHaveLength(14);
    expect(ll(1)).toMatchObject({
      mode: "graph",
      timing: "CUDA-graph replay of each call",
      notes: ["num_max_dispatch_tokens_per_rank 2"],
    });
    expect(report.peers).toEqual([
      {
        impl: "deepep-ll",
        available: true,
        version: "1.2.1",
        reason: expect.stringMatching(/^deepep-ll stopped/),
      },
      { impl: "deepep-ht", available: true, version: null, reason: expect.stringMatching(/did not finish/) },
      { impl: "deepep-ht-caller", available: true, version: "1.2.1", reason: null },
      {
        impl: "pplx",
        available: false,
        version: null,
        reason: "ModuleNotFoundError: No module named 'pplx_kernels'",
      },
      { impl: "switchyard-py", available: true, version: "0.9.0", reason: null },
    ]);
    expect(report.options.peers).toEqual([
      "deepep-ll",
      "deepep-ht",
      "deepep-ht-caller",
      "pplx",
      "switchyard-py",
    ]);
    // The final table: by layout and tokens, ours first; the notes under it.
    const table = out.slice(out.lastIndexOf("\nlayout ") + 1);
    expect(table).toMatch(/masked\s+1\s+switchyard[^\n]*\nmasked\s+1\s+deepep-ll[^\n]*\nmasked\s+1\s+pplx/);
    expect(out).toMatch(
      /deepep-ll 1\.2\.1: CUDA-graph replay of each call; num_max_dispatch_tokens_per_rank 2/,
    );
    expect(out).toMatch(/pplx: ModuleNotFoundError/);
    // The caller row: after deepep-ht at its point, its name in full in an aligned impl column.
    const contiguous = table.split("\n").filter((l) => l.startsWith("contiguous"));
    expect(contiguous.map((l) => l.split(/\s+/)[2])).toEqual(["switchyard", "deepep-ht", "deepep-ht-caller"]);
    const end = table.indexOf("disp us") + "disp us".length; // the right-aligned column after impl
    for (const l of contiguous) expect([l[end - 1] !== " ", l[end]], l).toEqual([true, " "]);
    expect(out).toMatch(
      /deepep-ht-caller 1\.2\.1: each call launched eagerly, dispatch = cast_fp8 \+ get_dispatch_layout \+ dispatch \+ permute; the like-for-like comparison for switchyard's contiguous rows with bf16 input/,
    );
    const svg = readFileSync(join(dir, "b.svg"), "utf8");
    expect(svg.match(/<polyline data-series="masked\/deepep-ll"[^>]*stroke-dasharray="2 3"/g)).toHaveLength(
      2,
    );
    expect(svg).toContain("masked, DeepEP low latency");
    expect(svg).toMatch(
      /<polyline data-series="contiguous\/deepep-ht-caller"[^>]*stroke-dasharray="6 3 2 3"/,
    );
    expect(svg).toContain("contiguous, DeepEP normal + caller (torch)");
    const schema = JSON.parse(
      await readFile(join(import.meta.dirname, "..", "..", "schemas", "bench-report.schema.json"), "utf8"),
    );
    const validate = new Ajv({ allErrors: true, strict: true, strictRequired: false }).compile(schema);
    const ok = validate(report);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  }, 120_000);

  it("with ranks sharing a GPU every peer row is skipped without starting Python", async () => {
    const dir = tempDir("sy-bench-peers-");
    const { report } = await bench(
      dir,
      ["--no-baseline", "--peers", "pplx", "--python", "/nonexistent/python"],
      2,
    );
    const peers = report.points.filter((p: Row) => p.impl === "pplx");
    expect(peers).toHaveLength(4);
    for (const p of peers) expect(p.errors).toEqual(["skipped: the peers need one GPU per rank"]);
    expect(report.peers).toEqual([
      { impl: "pplx", available: false, version: null, reason: "the peers need one GPU per rank" },
    ]);
  }, 120_000);

  it("a missing interpreter is a skip reason, not a failure", async () => {
    const dir = tempDir("sy-bench-peers-");
    const { report } = await bench(dir, [
      "--no-baseline",
      "--peers",
      "pplx",
      "--python",
      "/nonexistent/python",
    ]);
    const peers = report.points.filter((p: Row) => p.impl === "pplx");
    for (const p of peers) expect(p.errors[0]).toMatch(/^skipped: \/nonexistent\/python: spawn .*ENOENT/);
  }, 120_000);
});
