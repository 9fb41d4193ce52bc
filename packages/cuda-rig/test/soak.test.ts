import { fileURLToPath } from "node:url";
import { computeLayout } from "@switchyard/core";
import { describe, expect, it } from "vitest";
import { type CycleSample, formatCycles, judgeLeak, runCycles } from "../src/checks/cycles.js";
import { buildSoakSets, compareSoak, soakConfigs, soakInputs, soakStep } from "../src/checks/soakPlan.js";
import { formatSoak, memoryFigures, runSoak } from "../src/checks/soakRun.js";
import { WorkerGroup } from "../src/launcher.js";

const fake = fileURLToPath(new URL("./fixtures/fakeFaultWorker.mjs", import.meta.url));

describe("soak plan (no GPU)", () => {
  it("token counts, routings and layouts change from step to step", () => {
    const [masked] = soakConfigs(4, ["masked"]);
    const tokens = Array.from({ length: 64 }, (_, s) => soakInputs(masked, s, 3).tokens);
    expect(tokens).toContain(0);
    expect(tokens).toContain(32);
    expect(new Set(tokens).size).toBeGreaterThan(10);
    // skewed sets send most slots to low experts
    const skew = soakInputs(masked, 2, 3).inputs[0].topkIdx.filter((e) => e >= 0);
    expect(skew.filter((e) => e < 4).length).toBeGreaterThan(skew.length / 3);
    const picks = Array.from({ length: 8 }, (_, i) => soakStep(i, 2, 64));
    expect(picks.map((p) => p.layout)).toEqual([0, 1, 0, 1, 0, 1, 0, 1]);
    expect(new Set(picks.map((p) => p.set)).size).toBe(8);
  });

  it("each rank's expectation is core's reference; a changed count, row, scale or y is caught", async () => {
    for (const config of soakConfigs(2, ["masked", "contiguous"])) {
      const sets = await buildSoakSets(config, 6, 11);
      for (const set of sets) {
        for (const rs of set) {
          const w = rs.want;
          expect(rs.expertOut.length).toBe(computeLayout(config).rows * config.hidden);
          // The device answer laid out as the layout's regions: rebuild it from the packed rows.
          const H = config.hidden;
          const rows = computeLayout(config).rows;
          const S = w.scales ? w.scales.length / Math.max(1, w.rows.length) : 0;
          const got = {
            counts: w.sourceCounts.slice(),
            meta: new Int32Array(rows * 4),
            x: w.x instanceof Uint8Array ? new Uint8Array(rows * H) : new Uint16Array(rows * H),
            scales: w.scales ? new Float32Array(rows * S) : null,
            y: w.y.slice(),
          };
          w.rows.forEach((row, i) => {
            got.meta.set(w.meta.subarray(i * 4, i * 4 + 4), row * 4);
            got.x.set(w.x.subarray(i * H, (i + 1) * H), row * H);
            if (got.scales && w.scales) got.scales.set(w.scales.subarray(i * S, (i + 1) * S), row * S);
          });
          expect(compareSoak(w, got, H)).toEqual([]);
          if (w.rows.length) {
            const bad = { ...got, x: got.x.slice() };
            bad.x[w.rows[0] * H + 5] ^= 1;
            expect(compareSoak(w, bad, H).join()).toMatch(/payload differs at 5/);
          }
          if (w.y.length) {
            const bad = { ...got, y: got.y.slice() };
            bad.y[0] ^= 1;
            expect(compareSoak(w, bad, H).join()).toMatch(/y differs at 0/);
          }
          const badCounts = { ...got, counts: got.counts.map((v, i) => (i === 0 ? v + 1 : v)) };
          expect(compareSoak(w, badCounts, H).join()).toMatch(/counts\[0\]/);
        }
      }
    }
  });

  it("contiguous expectations include the padding rows of every expert block: their meta checked, their payload not", async () => {
    const [c] = soakConfigs(2, ["contiguous"]);
    const [set] = await buildSoakSets(c, 2, 4).then((s) => [s[1]]);
    const w = set[0].want;
    const padded = Array.from(w.meta).filter((_, i) => i % 4 === 0 && w.meta[i] === -1).length;
    expect(w.rows.length % 8).toBe(0);
    expect(padded).toBeGreaterThan(0);
    const H = c.hidden;
    const rows = computeLayout(c).rows;
    const got = {
      counts: w.sourceCounts.slice(),
      meta: new Int32Array(rows * 4),
      x: new Uint16Array(rows * H),
      scales: null,
      y: w.y.slice(),
    };
    w.rows.forEach((row, i) => {
      got.meta.set(w.meta.subarray(i * 4, i * 4 + 4), row * 4);
      got.x.set(w.x.subarray(i * H, (i + 1) * H), row * H);
    });
    const pad =
      w.rows[Array.from({ length: w.rows.length }, (_, i) => i).find((i) => w.meta[i * 4] === -1) ?? -1];
    got.x.fill(0xffff, pad * H, (pad + 1) * H); // stale bytes in a padding row: unspecified, passes
    expect(compareSoak(w, got, H)).toEqual([]);
    got.meta[pad * 4] = 0;
    expect(compareSoak(w, got, H).join()).toMatch(new RegExp(`row ${pad}: meta differs`));
  });
});

describe("soak and cycles orchestration (stand-in workers)", () => {
  const launch = (ranks: number, env: Record<string, string>) =>
    WorkerGroup.launch({ ranks, env, workerPath: fake });

  it("soak: chunks, progress, memory before / after, a mismatch fails the run", async () => {
    const progress: number[] = [];
    const r = await runSoak({
      ranks: 2,
      steps: 1200,
      layouts: ["masked"],
      sets: 4,
      chunk: 500,
      launch,
      onProgress: (p) => progress.push(p.stepsDone),
    });
    expect(r).toMatchObject({ ok: true, stepsDone: 1200, mismatchedSteps: 0, error: null });
    expect(progress).toEqual([200, 700, 1200]);
    expect(r.memory?.flat).toBe(true);
    expect(formatSoak(r)).toMatch(
      /^PASS soak: 1200 of 1200 steps on 2 ranks \(masked, 4 input sets each\), 0 mismatched/,
    );
    const bad = await runSoak({
      ranks: 2,
      steps: 600,
      layouts: ["masked"],
      sets: 2,
      chunk: 300,
      launch: (ranks, env) =>
        WorkerGroup.launch({ ranks, env: { ...env, FAKE_SOAK_MISMATCH: "450" }, workerPath: fake }),
    });
    expect(bad.ok).toBe(false);
    expect(bad.mismatchedSteps).toBe(2);
    expect(bad.mismatches[0]).toBe("step 450: y differs");
  }, 60_000);

  it("memory figures: flat within 2 MiB of GPU memory, a leak is not", () => {
    const s = (gpu: number, rss: number) => [{ rank: 0, gpuUsedBytes: gpu, rss, heapUsed: 0 }];
    expect(memoryFigures(s(100, 1e6), s(100 + 2 ** 20, 2e6)).flat).toBe(true);
    expect(memoryFigures(s(100, 1e6), s(100 + 4 * 2 ** 20, 1e6))).toMatchObject({
      flat: false,
      gpuDeltaBytes: 4 * 2 ** 20,
    });
  });

  it("cycles: sessions opened and destroyed on the same workers; a leak of every session is caught", async () => {
    // 1,000 cycles (about a second here): a fresh worker's RSS grows by ~20 MiB over the first
    // half (V8 warming up), which only the second-half rule lets pass.
    const ok = await runCycles({ ranks: 2, count: 1000, checkEvery: 250, warmup: 3, launch, verify: false });
    // steps at cycles 0, 250, .. 1000 of all 1,003 and on the last
    expect(ok).toMatchObject({ ok: true, cycles: 1000, stepsChecked: 6, errors: [] });
    expect(ok.memory?.gpuDeltaBytes).toBe(0);
    // every 10% of the cycles, every rank
    expect(ok.series.map((s) => s.cycle)).toEqual([-3, 0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    expect(ok.series.every((s) => s.ranks.length === 2)).toBe(true);
    expect(ok.leak).toMatchObject({ ok: true, fromCycle: 500, toCycle: 1000 });
    expect(formatCycles(ok)).toMatch(/RSS growth over the second half \(cycles 500 to 1000\)/);
    expect(formatCycles(ok)).toMatch(/\n {4}rank 1: RSS( \d+){12}; GPU used( \d+){12}/);
    const leak = await runCycles({
      ranks: 2,
      count: 20,
      warmup: 2,
      verify: false,
      launch: (ranks, env) =>
        WorkerGroup.launch({ ranks, env: { ...env, FAKE_LEAK: "1" }, workerPath: fake }),
    });
    expect(leak.ok).toBe(false);
    // reported from before the warm-up (2 cycles), judged from after it
    expect(leak.memory?.gpuDeltaBytes).toBe(22 * 4 * 2 ** 20);
    expect(leak.leak?.gpuDeltaBytes).toBe(20 * 4 * 2 ** 20);
  }, 60_000);

  it("cycles verdict: RSS warm-up passes, steady growth in the second half fails, so does GPU memory", () => {
    const MIB = 2 ** 20;
    // 1,000 cycles sampled every 100 on two ranks; rss(c) and gpu(c) in MiB for rank 1, rank 0 stays flat.
    const series = (rss: (c: number) => number, gpu = (_c: number) => 0): CycleSample[] =>
      Array.from({ length: 11 }, (_, i) => ({
        cycle: i * 100,
        ranks: [0, 1].map((rank) => ({
          rank,
          gpuUsedBytes: (1000 + (rank ? gpu(i * 100) : 0)) * MIB,
          rss: (rank ? rss(i * 100) : 669) * MIB,
          heapUsed: 0,
        })),
      }));
    // today's figures: +64 MiB first to last, all of it before the middle, then noise of a MiB
    const warm = judgeLeak(series((c) => (c < 500 ? 669 + (64 * c) / 500 : 733 + ((c / 100) % 2))));
    expect(warm).toMatchObject({ ok: true, fromCycle: 500, toCycle: 1000 });
    expect(Math.abs(warm?.rssPer1000[1] ?? 99)).toBeLessThan(4 * MIB);
    // the same 64 MiB spread evenly over the run: 64 MiB per 1,000 cycles
    const steady = judgeLeak(series((c) => 669 + (64 * c) / 1000));
    expect(steady?.ok).toBe(false);
    expect((steady?.rssPer1000[1] ?? 0) / MIB).toBeCloseTo(64, 5);
    expect(steady?.rssPer1000[0]).toBe(0);
    // just under and just over 16 MiB per 1,000 cycles
    expect(judgeLeak(series((c) => 669 + (15 * c) / 1000))?.ok).toBe(true);
    expect(judgeLeak(series((c) => 669 + (17 * c) / 1000))?.ok).toBe(false);
    // GPU memory: 2 MiB passes, 3 does not
    const gpuUp = (mib: number) =>
      judgeLeak(
        series(
          () => 669,
          (c) => (c > 0 ? mib : 0),
        ),
      );
    expect(gpuUp(2)?.ok).toBe(true);
    expect(gpuUp(3)).toMatchObject({ ok: false, gpuDeltaBytes: 3 * MIB });
    // the warm-up's own samples (negative cycles) are reported, not judged
    const warmed = series(() => 669);
    warmed.unshift({
      ...warmed[0],
      cycle: -4000,
      ranks: warmed[0].ranks.map((r) => ({ ...r, rss: 500 * MIB })),
    });
    expect(judgeLeak(warmed)).toMatchObject({ ok: true, fromCycle: 500, rssPer1000: [0, 0] });
    // a short run: 6 MiB in its second half is noise, however steep per 1,000 cycles; 10 MiB is not
    const short = (mib: number): CycleSample[] =>
      [0, 30, 60].map((cycle) => ({
        cycle,
        ranks: [{ rank: 0, gpuUsedBytes: 0, rss: (669 + (cycle === 60 ? mib : 0)) * MIB, heapUsed: 0 }],
      }));
    expect(judgeLeak(short(6))?.ok).toBe(true);
    expect(judgeLeak(short(10))?.ok).toBe(false);
    expect(judgeLeak(short(10).slice(0, 1))).toBeNull();
  });
});
