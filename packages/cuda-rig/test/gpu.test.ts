/**
 * GPU tests: skipped, with the reason in their titles, where the backend cannot run (no native
 * build, no GPU). On a GPU machine they run the same checks as `node dist/cli.js checks`.
 */
import { runConformance } from "@switchyard/conformance";
import { defineConfig } from "@switchyard/core";
import { visibleGpuCount } from "@switchyard/cuda";
import { describe, expect, it } from "vitest";
import { cudaBackend } from "../src/backend.js";
import { runGraphCheck, runTimeoutChecks } from "../src/checks/run.js";
import { drainPool } from "../src/pool.js";

const reason = await cudaBackend().unavailableReason();
const twoGpus = reason ?? (visibleGpuCount() < 2 ? "fewer than 2 GPUs visible" : null);
const title = (t: string) => (twoGpus ? `${t} (skipped: ${twoGpus})` : t);

describe("cuda backend on GPUs", () => {
  it.skipIf(twoGpus !== null)(
    title("a step captured in a CUDA graph replays bit-exact with core's reference (bf16 -> fp8)"),
    async () => {
      const config = defineConfig({
        ranks: 2,
        experts: 8,
        topK: 3,
        hidden: 256,
        maxTokensPerRank: 24,
        dispatchDtype: "fp8-e4m3",
      });
      const r = await runGraphCheck(config, { seed: 3, replays: 4 });
      expect(r.errors).toEqual([]);
    },
    300_000,
  );

  it.skipIf(twoGpus !== null)(
    title("contiguous layout: a graph-replayed step is bit-exact with core's reference"),
    async () => {
      const config = defineConfig({
        ranks: 2,
        experts: 8,
        topK: 3,
        hidden: 256,
        maxTokensPerRank: 40,
        dispatchDtype: "fp8-e4m3",
        layout: "contiguous",
        expertAlignment: 16,
      });
      const r = await runGraphCheck(config, { seed: 4, replays: 4 });
      expect(r.errors).toEqual([]);
    },
    300_000,
  );

  it.skipIf(twoGpus !== null)(
    title("a missing rank is a TimeoutError naming rank, peer and stage, not a hang"),
    async () => {
      const outcomes = await runTimeoutChecks(400);
      await drainPool();
      for (const o of outcomes) expect(o, o.detail).toMatchObject({ ok: true });
    },
    300_000,
  );

  it.skipIf(twoGpus !== null)(
    title("the conformance suite passes"),
    async () => {
      const report = await runConformance(cudaBackend(), { numRuns: 5 });
      await drainPool();
      expect(report.results.filter((r) => r.status === "fail").map((r) => r.name)).toEqual([]);
    },
    1_800_000,
  );
});
