import { DestroyedError, defineConfig, ReferenceSession } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { describeMemory, growth, settledMemory } from "../../../test-support/memory.js";
import { webgpuBackend } from "../src/index.js";
import { randomExpertOut, randomInputs, rng, runStep } from "./helpers.js";

// R4 E16 K4 H1024 M64 masked: each session allocates 4 heaps of 1 MiB and 4 local buffers of 2 MiB, work and staging
// buffers (over 10 MiB) on the device, which lavapipe keeps in host memory; a session that leaked
// them would add over 10 MiB a cycle (over 2 GiB over the run).
const config = defineConfig({ ranks: 4, experts: 16, topK: 4, hidden: 1024, maxTokensPerRank: 64 });
const CYCLES = 200;
/** Allowed growth over all cycles, far below one leaked session per cycle. */
const BOUND = { heapUsed: 8 * 2 ** 20, external: 8 * 2 ** 20, rss: 128 * 2 ** 20 };

describe("create / destroy", () => {
  it(`${CYCLES} WebGPU sessions created (half of them stepped) and destroyed leave memory flat`, async () => {
    const rand = rng(99);
    const inputs = randomInputs(config, rand, { tokens: 4 });
    const out = randomExpertOut(new ReferenceSession(config).layout.rows, config.hidden, rand);
    const ref = new ReferenceSession(config);
    const want = (await runStep(ref, inputs, out)).map((y) => Array.from(y));
    let exact = 0;
    let refused = 0;
    // Even cycles run a step (checked against the reference), odd ones only create and destroy.
    let n = 0;
    const cycle = async () => {
      const s = await webgpuBackend.createSession(config);
      if (n++ % 2 === 0) {
        const y = await runStep(s, inputs, out);
        if (y.every((a, r) => a.length === want[r].length && a.every((v, i) => v === want[r][i]))) exact++;
      }
      await s.destroy();
      if (
        await s.dispatchRecv(0).then(
          () => false,
          (e) => e instanceof DestroyedError,
        )
      )
        refused++;
    };
    for (let i = 0; i < 10; i++) await cycle(); // warm-up: pipelines, Dawn's allocator pools
    const before = await settledMemory();
    for (let i = 0; i < CYCLES; i++) await cycle();
    const after = await settledMemory();
    const g = growth(before, after);
    console.log(
      `${describeMemory(`${CYCLES} create/destroy cycles, half with a step (webgpu)`, before, after)}${after.collected ? " (after gc)" : ""}`,
    );
    expect(exact).toBe((CYCLES + 10) / 2);
    expect(refused).toBe(CYCLES + 10);
    expect(g.heapUsed).toBeLessThan(BOUND.heapUsed);
    expect(g.external).toBeLessThan(BOUND.external);
    expect(g.rss).toBeLessThan(BOUND.rss);
  }, 120_000);
});
