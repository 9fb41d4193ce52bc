import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../../test-support/tempDir.js";
import { PEER_IMPLS } from "../../src/bench/peers.js";
import { aggregate, failedPoint } from "../../src/bench/plan.js";
import { BENCH_SCHEMA, type BenchReport } from "../../src/bench/report.js";
import { type BenchIo, runBench } from "../../src/bench/run.js";
import { emptyReport, point, rankResults } from "./fixtures.js";

async function schemaJson() {
  const file = join(import.meta.dirname, "..", "..", "schemas", "bench-report.schema.json");
  return JSON.parse(await readFile(file, "utf8"));
}

async function validator() {
  return new Ajv({ allErrors: true, strict: true, strictRequired: false }).compile(await schemaJson());
}

/** The report as --json writes it. */
const asJson = (v: unknown) => JSON.parse(JSON.stringify(v));

/** A sweep's report built the way runBench builds it, from synthetic per-rank samples. */
function syntheticReport(): BenchReport {
  const report = emptyReport();
  const baselinePhases = ["dispatch", "combine", "step"] as const;
  report.points.push(
    aggregate(point("masked", 1), "switchyard", "graph", rankResults(2), 350),
    aggregate(point("masked", 1), "nccl", "eager", rankResults(40, 10, 4, baselinePhases), 350),
    aggregate(point("masked", 128), "switchyard", "eager", rankResults(8), null),
    failedPoint(point("masked", 128), "nccl", "eager", "skipped: NCCL not initialised"),
    aggregate(point("contiguous", 4096), "switchyard", "graph", rankResults(100), 350),
    failedPoint(point("contiguous", 4096), "nccl", "eager", "NativeError: rank 0: SY_ERR_NCCL: boom"),
    failedPoint(point("contiguous", 8192), "switchyard", "graph", "WorkerExitError: rank 1: exited"),
  );
  // One rank: nothing leaves it, so no bytes and no GB/s.
  const oneRank = rankResults(5, 10, 1).map((r) => ({ ...r, remoteDispatchBytes: 0, remoteCombineBytes: 0 }));
  report.points.push(aggregate(point("masked", 8), "switchyard", "graph", oneRank, 350));
  report.points[2].errors.push("rank 2: counts[3] = 1, the routing gives 2");
  report.finishedAt = "2026-11-22T00:05:00.000Z";
  return report;
}

function io(): BenchIo {
  return { out: () => {}, err: () => {}, progress: { write: () => {}, interactive: false } };
}

const results = join(import.meta.dirname, "..", "..", "..", "cuda", "results");
const COMMITTED = [
  "2026-11-24-protocol-v2/bench1.json",
  "2026-11-24-protocol-v2/bench2.json",
  "2026-11-24-protocol-v2/bench4.json",
  "2026-11-24-host-overhead/run2/bench1.json",
];

describe("bench report schema", () => {
  it("describes a report built from synthetic samples: measured, failed, skipped and one-rank points", async () => {
    const validate = await validator();
    const report = syntheticReport();
    expect(report.points.map((p) => [p.impl, p.mode, Object.keys(p.phases).length, p.errors.length])).toEqual(
      [
        ["switchyard", "graph", 7, 0],
        ["nccl", "eager", 3, 0],
        ["switchyard", "eager", 7, 1],
        ["nccl", "eager", 0, 1],
        ["switchyard", "graph", 7, 0],
        ["nccl", "eager", 0, 1],
        ["switchyard", "graph", 0, 1],
        ["switchyard", "graph", 7, 0],
      ],
    );
    expect(report.points[2].nvlinkFraction.dispatch).toBeNull();
    expect(report.points[7].gbps).toEqual({ dispatch: null, combine: null });
    const unfinished = { ...report, finishedAt: null, points: report.points.slice(0, 1) };
    const noBaseline: BenchReport = {
      ...report,
      options: { ...report.options, baseline: false },
      nccl: { version: null, available: false, reason: "--no-baseline" },
      points: report.points.filter((p) => p.impl === "switchyard"),
    };
    const bare = { ...emptyReport(), device: { name: null, gpus: 1, smCount: null }, commit: null };
    for (const r of [report, unfinished, noBaseline, bare]) {
      const ok = validate(asJson(r));
      expect(validate.errors ?? []).toEqual([]);
      expect(ok).toBe(true);
    }
  });

  it("describes the report runBench writes with --json (stand-in workers: a dead worker, an NCCL error)", async () => {
    const validate = await validator();
    const dir = tempDir("sy-bench-schema-");
    const json = join(dir, "b.json");
    const status = await runBench(
      [
        ...["--ranks", "2", "--masked-tokens", "1,16", "--contiguous-tokens", "64,128"],
        ...["--hidden", "256", "--experts", "16", "--steps", "5", "--warmup", "1"],
        ...["--peers", "none", "--json", json, "--svg", join(dir, "b.svg")],
      ],
      {
        io: io(),
        hooks: {
          workerPath: fileURLToPath(new URL("../fixtures/fakeBenchWorker.mjs", import.meta.url)),
          gpus: 2,
          unavailableReason: async () => null,
        },
      },
    );
    expect(status).toBe(1);
    const report = JSON.parse(readFileSync(json, "utf8"));
    expect(report.schema).toBe(BENCH_SCHEMA);
    expect(report.points).toHaveLength(8);
    const ok = validate(report);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  }, 120_000);

  it("lists the peers the bench knows (PEER_IMPLS) as its peer impls", async () => {
    const schema = await schemaJson();
    expect(schema.definitions.peerImpl.enum).toEqual([...PEER_IMPLS]);
    expect(schema.definitions.point.properties.impl.enum).toEqual(["switchyard", "nccl", ...PEER_IMPLS]);
  });

  it.each(COMMITTED)("describes the committed report %s", async (file) => {
    const validate = await validator();
    const report = JSON.parse(await readFile(join(results, file), "utf8"));
    expect(report.schema).toBe(BENCH_SCHEMA);
    const ok = validate(report);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it("refuses a report without a required field, with a value outside an enum, or a field it does not know", async () => {
    const validate = await validator();
    const good = asJson(syntheticReport());
    expect(validate(good)).toBe(true);
    /** `good` with the value at JSON pointer `path` replaced (undefined: removed); the validator's errors. */
    const errorsWith = (path: string, value: unknown) => {
      const r = structuredClone(good);
      const keys = path.split("/").slice(1);
      const last = keys.pop() as string;
      const parent = keys.reduce((o, k) => o[k], r);
      if (value === undefined) delete parent[last];
      else parent[last] = value;
      expect(validate(r), path).toBe(false);
      return validate.errors ?? [];
    };
    const error = (instancePath: string, keyword: string) =>
      expect.objectContaining({ instancePath, keyword });

    // A required field missing.
    expect(errorsWith("/schema", undefined)).toEqual([
      expect.objectContaining({ instancePath: "", params: { missingProperty: "schema" } }),
    ]);
    expect(errorsWith("/points/0/impl", undefined)).toContainEqual(
      expect.objectContaining({ instancePath: "/points/0", params: { missingProperty: "impl" } }),
    );
    expect(errorsWith("/points/0/phases/step/p99", undefined)).toContainEqual(
      expect.objectContaining({ instancePath: "/points/0/phases/step", params: { missingProperty: "p99" } }),
    );

    // A value outside its enum, or another format version.
    expect(errorsWith("/schema", "switchyard-bench/2")).toEqual([error("/schema", "const")]);
    expect(errorsWith("/points/0/layout", "ragged")).toEqual([error("/points/0/layout", "enum")]);
    expect(errorsWith("/points/0/impl", "mpi")).toContainEqual(error("/points/0/impl", "enum"));
    expect(errorsWith("/points/0/mode", "replay")).toContainEqual(error("/points/0/mode", "enum"));
    expect(errorsWith("/config/dispatchDtype", "fp8")).toEqual([error("/config/dispatchDtype", "enum")]);
    expect(errorsWith("/points/0/phases/dispatchHalf", good.points[0].phases.dispatch)).toContainEqual(
      error("/points/0/phases", "propertyNames"),
    );
    // The baseline: eager, no SM count, no send / receive halves.
    expect(errorsWith("/points/1/mode", "graph")).toContainEqual(error("/points/1/mode", "const"));
    expect(errorsWith("/points/1/sms", 24)).toContainEqual(error("/points/1/sms", "type"));
    expect(errorsWith("/points/1/phases/dispatchSend", good.points[1].phases.dispatch)).toContainEqual(
      error("/points/1/phases", "propertyNames"),
    );

    // null only where the bench writes null.
    expect(errorsWith("/points/0/phases/step/median", null)).toEqual([
      error("/points/0/phases/step/median", "type"),
    ]);
    expect(errorsWith("/points/0/tokens", null)).toEqual([error("/points/0/tokens", "type")]);
    expect(errorsWith("/nccl/version", null)).toContainEqual(error("/nccl/version", "type"));

    // A field the format does not have.
    expect(errorsWith("/points/0/extra", 1)).toEqual([error("/points/0", "additionalProperties")]);
    expect(errorsWith("/nvlink/extra", 1)).toEqual([error("/nvlink", "additionalProperties")]);
  });
});
