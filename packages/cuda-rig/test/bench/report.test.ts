import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../src/bench/args.js";
import { aggregate, failedPoint, planPoints } from "../../src/bench/plan.js";
import { Progress, renderProgress } from "../../src/bench/progress.js";
import { BENCH_SCHEMA, bandwidth, PHASES } from "../../src/bench/report.js";
import { escapeXml, legendSlots, renderSvg } from "../../src/bench/svg.js";
import { formatTable, tableHeader, tableRow } from "../../src/bench/table.js";
import { checkTargets, formatTargets } from "../../src/bench/targets.js";
import { emptyReport, point, rankResults } from "./fixtures.js";

describe("aggregate", () => {
  it("summarises the slowest rank of each step and averages bytes over ranks", () => {
    const p = aggregate(point("masked", 128), "switchyard", "graph", rankResults(10), 350);
    expect(Object.keys(p.phases)).toEqual([...PHASES]);
    // Phase 0 ("dispatchSend"): rank 3 is slowest: 10 * 1.3 + i % 3 -> median over 10 steps.
    const slowest = Array.from({ length: 10 }, (_, i) => 13 + (i % 3)).sort((a, b) => a - b);
    expect(p.phases.dispatchSend?.median).toBeCloseTo((slowest[4] + slowest[5]) / 2, 10);
    expect(p.phases.dispatchSend?.n).toBe(10);
    expect(p.rankMedianUs.dispatchSend).toHaveLength(4);
    expect(p.bytes).toEqual({ dispatch: 2.5e6, combine: 5e6 });
    const d = p.phases.dispatch?.median ?? 0;
    expect(p.gbps.dispatch).toBeCloseTo(2.5e6 / (d * 1e-6) / 1e9, 10);
    expect(p.nvlinkFraction.dispatch).toBeCloseTo((p.gbps.dispatch ?? 0) / 350, 10);
    expect(p.memory.deviceBytes).toBe(300e6 + 3);
    expect(p.sms).toBe(24);
    expect(p.errors).toEqual([]);
  });

  it("the baseline has no halves and no SM count; errors of every rank are kept", () => {
    const ranks = rankResults(100, 10, 4, ["dispatch", "combine", "step"]);
    ranks[2].errors.push("rank 2: counts[3] = 1, the routing gives 2");
    const p = aggregate(point("contiguous", 4096), "nccl", "eager", ranks, null);
    expect(Object.keys(p.phases)).toEqual(["dispatch", "combine", "step"]);
    expect(p.sms).toBeNull();
    expect(p.nvlinkFraction.dispatch).toBeNull();
    expect(p.errors).toEqual(["rank 2: counts[3] = 1, the routing gives 2"]);
  });

  it("bandwidth is null without bytes or time", () => {
    expect(bandwidth(0, 10, 300)).toEqual({ gbps: null, fraction: null });
    expect(bandwidth(1e6, undefined, 300)).toEqual({ gbps: null, fraction: null });
    expect(bandwidth(1e6, 10, 0).fraction).toBeNull();
    const b = bandwidth(1e6, 10, 100);
    expect(b.gbps).toBeCloseTo(100, 10);
    expect(b.fraction).toBeCloseTo(1, 10);
  });
});

describe("planPoints", () => {
  it("one config per (layout, tokens): masked ascending, then contiguous with the alignment", () => {
    const points = planPoints(parseBenchArgs(["--masked-tokens", "8,1", "--contiguous-tokens", "512"]), 4);
    expect(points.map((p) => `${p.layout}:${p.tokens}`)).toEqual(["masked:1", "masked:8", "contiguous:512"]);
    expect(points[2].config).toMatchObject({ maxTokensPerRank: 512, expertAlignment: 128, ranks: 4 });
    expect(points[0].config.expertAlignment).toBe(1);
  });
});

describe("the JSON report and the SVG plot from a small synthetic run", () => {
  const report = emptyReport();
  report.points.push(
    aggregate(point("masked", 1), "switchyard", "graph", rankResults(2), 350),
    aggregate(
      point("masked", 1),
      "nccl",
      "eager",
      rankResults(40, 10, 4, ["dispatch", "combine", "step"]),
      350,
    ),
    aggregate(point("masked", 128), "switchyard", "graph", rankResults(8), 350),
    aggregate(
      point("masked", 128),
      "nccl",
      "eager",
      rankResults(300, 10, 4, ["dispatch", "combine", "step"]),
      350,
    ),
    aggregate(point("contiguous", 4096), "switchyard", "graph", rankResults(100), 350),
    failedPoint(point("contiguous", 4096), "nccl", "eager", "NativeError: rank 0: SY_ERR_NCCL: boom"),
  );

  it("JSON round-trips with the schema, the bytes definition and per-point phase statistics", () => {
    const back = JSON.parse(JSON.stringify(report));
    expect(back.schema).toBe(BENCH_SCHEMA);
    expect(back.bytesCounted).toMatch(/hidden x dispatch dtype bytes/);
    expect(back.nvlink.minGBps).toBe(350);
    expect(back.points).toHaveLength(6);
    for (const p of back.points) {
      expect(Object.keys(p).sort()).toEqual(
        [
          "bytes",
          "errors",
          "gbps",
          "impl",
          "layout",
          "memory",
          "mode",
          "nvlinkFraction",
          "phases",
          "rankMedianUs",
          "sms",
          "tokens",
        ].sort(),
      );
      for (const st of Object.values(p.phases) as Record<string, number>[]) {
        expect(Object.keys(st).sort()).toEqual(["max", "mean", "median", "min", "n", "p90", "p99"]);
        expect(st.median).toBeLessThanOrEqual(st.p90);
        expect(st.p90).toBeLessThanOrEqual(st.p99);
      }
    }
  });

  it("the SVG has a dispatch and a combine panel with one line per (layout, impl) and a point per measurement", () => {
    const svg = renderSvg(report);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.trim().endsWith("</svg>")).toBe(true);
    expect(svg.match(/<g data-panel="(\w+)">/g)).toEqual([
      '<g data-panel="dispatch">',
      '<g data-panel="combine">',
    ]);
    const lines = [...svg.matchAll(/<polyline data-series="([^"]+)" points="([^"]+)"/g)];
    // Per panel: masked/switchyard (2 points), masked/nccl (2), contiguous/switchyard (1); the failed point has none.
    expect(lines.map((m) => m[1])).toEqual([
      "masked/switchyard",
      "masked/nccl",
      "contiguous/switchyard",
      "masked/switchyard",
      "masked/nccl",
      "contiguous/switchyard",
    ]);
    expect(lines.map((m) => m[2].split(" ").length)).toEqual([2, 2, 1, 2, 2, 1]);
    expect(svg.match(/<circle /g)).toHaveLength(10);
    // NCCL dashed, ours solid.
    expect(svg).toMatch(/data-series="masked\/nccl"[^>]*stroke-dasharray/);
    expect(svg).not.toMatch(/data-series="masked\/switchyard"[^>]*stroke-dasharray/);
    // Balanced tags, no raw special characters in text.
    for (const tag of ["g", "text", "circle", "title", "svg"]) {
      const open = svg.match(new RegExp(`<${tag}[ >]`, "g"))?.length ?? 0;
      const close = (svg.match(new RegExp(`</${tag}>`, "g"))?.length ?? 0) + (tag === "circle" ? 0 : 0);
      expect(close, tag).toBe(open);
    }
    expect(svg).toContain("NVIDIA H200 x 4");
    // Every coordinate inside the picture.
    for (const m of lines) {
      for (const xy of m[2].split(" ")) {
        const [x, y] = xy.split(",").map(Number);
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(1000);
        expect(y).toBeGreaterThanOrEqual(0);
        expect(y).toBeLessThanOrEqual(460);
      }
    }
  });

  it("the legend gives a long label (DeepEP normal + caller) a wider slot, and wraps rows inside the picture", () => {
    const short = [
      "masked, switchyard",
      "masked, NCCL baseline",
      "masked, pplx-kernels",
      "masked, DeepEP low latency",
    ];
    // Four short labels to a row, 220 apart, as before long labels existed.
    expect(legendSlots([...short, "contiguous, switchyard"])).toEqual([
      { x: 80, row: 0 },
      { x: 300, row: 0 },
      { x: 520, row: 0 },
      { x: 740, row: 0 },
      { x: 80, row: 1 },
    ]);
    const long = "contiguous, DeepEP normal + caller (torch)";
    const labels = ["contiguous, DeepEP normal", long, "contiguous, NCCL baseline", "contiguous, switchyard"];
    const slots = legendSlots(labels);
    expect(slots.map((s) => s.row)).toEqual([0, 0, 0, 1]);
    // The next slot starts past the long label's text (36 px of line, at least 6 px a character).
    expect(slots[2].x - slots[1].x).toBeGreaterThan(36 + long.length * 6);
    const caller = aggregate(point("contiguous", 4096), "deepep-ht-caller", "eager", rankResults(300), 350);
    const svg = renderSvg({ ...report, points: [...report.points, caller] });
    expect(svg).toMatch(
      /<polyline data-series="contiguous\/deepep-ht-caller"[^>]*stroke-dasharray="6 3 2 3"/,
    );
    const texts = [
      ...svg.matchAll(/<text x="(\d+)" y="(\d+)" dominant-baseline="middle" font-size="12">([^<]+)</g),
    ];
    expect(texts.map((m) => m[3])).toContain(long);
    for (const [i, m] of texts.entries()) {
      const next = texts[i + 1];
      if (next && next[2] === m[2])
        expect(Number(next[1]) - 36, m[3]).toBeGreaterThan(Number(m[1]) + m[3].length * 6);
      expect(Number(m[1]) + m[3].length * 6, m[3]).toBeLessThanOrEqual(1000);
    }
  });

  it("an empty report still renders, saying there is no data", () => {
    const svg = renderSvg(emptyReport());
    expect(svg.match(/no data/g)).toHaveLength(2);
    expect(escapeXml(`a<b & "c"`)).toBe("a&lt;b &amp; &quot;c&quot;");
  });

  it("the table has a header and one aligned row per point, errors shown", () => {
    const t = formatTable(report.points).split("\n");
    expect(t[0]).toBe(tableHeader().split("\n")[0]);
    expect(t).toHaveLength(2 + report.points.length);
    expect(t[2]).toMatch(/^masked\s+1\s+switchyard\s/);
    expect(t[3]).toMatch(/^masked\s+1\s+nccl\s.*\s+-\s+-\s/);
    expect(t[7]).toMatch(/ERRORS: NativeError: rank 0: SY_ERR_NCCL: boom/);
    expect(tableRow(report.points[0])).toContain("300 MB");
  });

  it("the targets are checked against the points that exist", () => {
    const checks = checkTargets(report);
    expect(checks.map((c) => c.target)).toHaveLength(10);
    const byName = Object.fromEntries(checks.map((c) => [c.target, c]));
    expect(byName["masked 1 tok: dispatch <= 8 us (median, graph)"].met).toBe(false); // the fixture is slower than 8 us
    expect(byName["contiguous 4096 tok: step >= 2x faster than NCCL"].met).toBeNull(); // its NCCL point failed
    expect(byName["contiguous 4096 tok: <= 24 SMs"].met).toBe(true);
    expect(byName["masked 128 tok: buffers <= 400 MB per rank"].met).toBe(true);
    expect(formatTargets(checks)).toMatch(/^(MET |MISS|n\/a )/);
    expect(checkTargets(emptyReport()).every((c) => c.met === null)).toBe(true);
  });
});

describe("progress bar", () => {
  it("renders the fraction done, the count and the label", () => {
    expect(renderProgress(0, 4, "masked 1 tok", 0, 8)).toBe("[........] 0/4  masked 1 tok  0 s");
    expect(renderProgress(2, 4, "x", 12.4, 8)).toBe("[####....] 2/4  x  12 s");
    expect(renderProgress(9, 4, "x", 1, 8)).toBe("[########] 9/4  x  1 s");
    expect(renderProgress(0, 0, "x", 1, 4)).toBe("[####] 0/0  x  1 s");
    expect(renderProgress(3, 12, "x", 0, 4)).toBe("[#...]  3/12  x  0 s");
  });

  it("redraws one line on a terminal and writes a line per update to a log", () => {
    const tty: string[] = [];
    const p = new Progress({ write: (t) => tty.push(t), interactive: true }, 2);
    p.show("a");
    p.tick();
    p.show("b");
    p.clear();
    const erase = "\r\x1b[2K";
    expect(tty[0].startsWith(erase) && tty[0].slice(erase.length)).toMatch(/^\[\.+\] 0\/2 {2}a/);
    expect(tty[1].startsWith(erase) && tty[1].slice(erase.length)).toMatch(/^\[#+\.+\] 1\/2 {2}b/);
    expect(tty[2]).toBe("\r\x1b[2K");
    const log: string[] = [];
    const q = new Progress({ write: (t) => log.push(t), interactive: false }, 1);
    q.show("a");
    q.tick();
    q.clear();
    expect(log).toHaveLength(1);
    expect(log[0].endsWith("\n")).toBe(true);
  });
});
