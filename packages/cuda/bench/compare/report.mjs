#!/usr/bin/env node
// The report of a compare run (run.sh): for every Switchyard point and phase (each half and the
// whole phase, dispatch and combine, and the step), the median of each
// round's median for the base library and for this tree's, and the difference; then each round's
// difference (run.sh alternates the sides, so round i of one side ran next to round i of the other:
// a difference the rounds disagree on is the machine's drift, not the change); a Markdown table on
// stdout and an SVG of the differences per phase.
//   node packages/cuda/bench/compare/report.mjs <folder with compare-<side>-<round>.json> [out.svg] [--base NAME] [--head NAME]
//   (sides base and head by default; run.sh's COMPARE_VARIANTS add more). A side NAME@IMPL takes the
//   rows of IMPL (default switchyard) from NAME's files: --base peers@deepep-ll --head peers@switchyard
//   compares two libraries measured in the same rounds (device-run.sh bench-2gpu-rounds).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const args = process.argv.slice(2);
const named = (flag, fallback) => {
  const i = args.indexOf(flag);
  if (i < 0) return fallback;
  const [, value] = args.splice(i, 2);
  if (value === undefined || value.startsWith("--")) {
    console.error(`report.mjs: ${flag} needs a side's name (base, head or a COMPARE_VARIANTS name)`);
    process.exit(2);
  }
  return value;
};
const baseName = named("--base", "base");
const headName = named("--head", "head");
const [dir, svgPath] = args;
if (!dir) {
  console.error(
    "usage: report.mjs <folder with compare-<side>-<round>.json> [out.svg] [--base NAME] [--head NAME] (sides: base, head and run.sh's COMPARE_VARIANTS)",
  );
  process.exit(2);
}
const PHASES = ["dispatch", "dispatchSend", "dispatchRecv", "combine", "combineSend", "combineRecv", "step"];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** point key -> phase -> medians of the rounds, for one side (NAME or NAME@IMPL). */
function side(name) {
  const [which, impl = "switchyard"] = name.split("@");
  const round = (f) => Number(f.match(/-(\d+)\.json$/)[1]);
  const files = readdirSync(dir)
    .filter((f) => new RegExp(`^compare-${which}-\\d+\\.json$`).test(f))
    .sort((a, b) => round(a) - round(b));
  if (files.length === 0) throw new Error(`no compare-${which}-<round>.json in ${dir}`);
  const out = new Map();
  let meta = null;
  for (const f of files) {
    const r = JSON.parse(readFileSync(join(dir, f), "utf8"));
    meta ??= { device: r.device, commit: r.commit, command: r.command };
    for (const p of r.points) {
      if (p.impl !== impl || !p.phases) continue;
      const key = `${p.layout} ${p.tokens}`;
      if (!out.has(key)) out.set(key, new Map());
      for (const ph of PHASES) {
        const m = p.phases[ph]?.median;
        if (typeof m !== "number") continue;
        const at = out.get(key);
        at.set(ph, [...(at.get(ph) ?? []), m]);
      }
    }
  }
  if (out.size === 0)
    throw new Error(`no ${impl} rows with phases in ${dir}'s compare-${which}-<round>.json`);
  return { points: out, rounds: files.length, meta };
}

const base = side(baseName);
const head = side(headName);
const rows = [];
for (const [key, phases] of head.points) {
  for (const ph of PHASES) {
    const h = phases.get(ph);
    const b = base.points.get(key)?.get(ph);
    if (!h || !b) continue;
    // Round i's difference, where both sides ran round i.
    const perRound = h.length === b.length ? h.map((x, i) => x - b[i]) : [];
    rows.push({ key, ph, base: median(b), head: median(h), perRound });
  }
}
const f1 = (x) => x.toFixed(1);
console.log(
  `${head.meta.device?.name ?? "?"} x ${head.meta.device?.gpus ?? "?"}; ${head.rounds} rounds each, alternating; µs, median of the rounds' medians\n`,
);
const signed = (d) => `${d >= 0 ? "+" : ""}${f1(d)}`;
console.log(`| point | phase | ${baseName} | ${headName} | ${headName} - ${baseName} | each round |`);
console.log("| --- | --- | ---: | ---: | ---: | --- |");
for (const r of rows) {
  const d = r.head - r.base;
  console.log(
    `| ${r.key} | ${r.ph} | ${f1(r.base)} | ${f1(r.head)} | ${signed(d)} | ${r.perRound.map(signed).join(" / ") || "—"} |`,
  );
}

if (svgPath) {
  // One bar per (point, phase): the difference in µs, right of the axis slower, left faster.
  const W = 760,
    rowH = 18,
    left = 250,
    mid = 500,
    scale = 20; // px per µs
  const H = 40 + rows.length * rowH;
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const bars = rows.map((r, i) => {
    const d = r.head - r.base;
    const y = 30 + i * rowH;
    const w = Math.min(Math.abs(d) * scale, W - mid - 60);
    const x = d >= 0 ? mid : mid - w;
    const color = d > 0 ? "#c0392b" : "#27ae60";
    return [
      `<text x="${left - 8}" y="${y + 12}" text-anchor="end" font-size="11">${esc(`${r.key} ${r.ph}`)}</text>`,
      `<rect x="${x}" y="${y + 2}" width="${Math.max(w, 1)}" height="${rowH - 5}" fill="${color}"/>`,
      `<text x="${d >= 0 ? x + w + 4 : x - 4}" y="${y + 12}" font-size="10" text-anchor="${d >= 0 ? "start" : "end"}">${d >= 0 ? "+" : ""}${f1(d)} µs (${f1(r.base)} → ${f1(r.head)})</text>`,
    ].join("");
  });
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="10" y="18" font-size="13">${esc(headName)} − ${esc(baseName)} per phase (µs; red slower, green faster)</text>`,
    `<line x1="${mid}" y1="26" x2="${mid}" y2="${H - 6}" stroke="#555"/>`,
    ...bars,
    "</svg>",
  ].join("\n");
  writeFileSync(svgPath, svg);
}
