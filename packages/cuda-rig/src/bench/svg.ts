import type { BenchReport, Impl, PhaseName, PointResult } from "./report.js";

const W = 1000;
const H = 460;
const PANEL_W = 420;
const PANEL_H = 300;
const TOP = 70;
const LEFTS = [80, 570];

/**
 * Colour per layout, dash per implementation (ours solid, NCCL dashed, the peers dotted or dash-dot,
 * ours in the peers' timing finely dotted).
 */
const COLOR: Record<string, string> = { masked: "#1f77b4", contiguous: "#d95f02" };
const DASH: Record<Impl, string> = {
  switchyard: "",
  nccl: "6 4",
  "deepep-ll": "2 3",
  "deepep-ht": "2 3",
  "deepep-ht-caller": "6 3 2 3",
  pplx: "9 3 2 3",
  "switchyard-py": "1 2",
};
const NAME: Record<Impl, string> = {
  switchyard: "switchyard",
  nccl: "NCCL baseline",
  "deepep-ll": "DeepEP low latency",
  "deepep-ht": "DeepEP normal",
  "deepep-ht-caller": "DeepEP normal + caller (torch)",
  pplx: "pplx-kernels",
  "switchyard-py": "switchyard via Python, peers' timing",
};
/**
 * Legend entries: a slot at least LEGEND_SLOT_W wide (four to a row), wider for a long label (its
 * width estimated at LEGEND_CHAR_W a character of the 12 px font); a new row of LEGEND_ROW_H where the
 * next slot would pass the picture's right edge.
 */
const LEGEND_LEFT = 80;
const LEGEND_SLOT_W = 220;
const LEGEND_CHAR_W = 6.5;
const LEGEND_ROW_H = 20;

/** Each legend label's slot: its left edge and row. */
export function legendSlots(labels: readonly string[]): { x: number; row: number }[] {
  let x = LEGEND_LEFT;
  let row = 0;
  return labels.map((label) => {
    const w = Math.max(LEGEND_SLOT_W, 36 + Math.ceil(label.length * LEGEND_CHAR_W) + 12);
    if (x > LEGEND_LEFT && x + w > W) {
      x = LEGEND_LEFT;
      row++;
    }
    const slot = { x, row };
    x += w;
    return slot;
  });
}

export function escapeXml(s: string): string {
  return s.replace(
    /[<>&"']/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!,
  );
}

interface Series {
  layout: string;
  impl: Impl;
  pts: { tokens: number; us: number }[];
}

function series(points: readonly PointResult[], phase: PhaseName): Series[] {
  const out = new Map<string, Series>();
  for (const p of points) {
    const v = p.phases[phase]?.median;
    if (v === undefined || !(v > 0)) continue;
    const key = `${p.layout}/${p.impl}`;
    if (!out.has(key)) out.set(key, { layout: p.layout, impl: p.impl, pts: [] });
    out.get(key)!.pts.push({ tokens: p.tokens, us: v });
  }
  for (const s of out.values()) s.pts.sort((a, b) => a.tokens - b.tokens);
  return [...out.values()];
}

/** Log-scale axis over [lo, hi] (both > 0) with ticks at powers of `base`. */
function logAxis(lo: number, hi: number, base: number) {
  const a = Math.floor(Math.log(lo) / Math.log(base));
  const b = Math.max(a + 1, Math.ceil(Math.log(hi) / Math.log(base)));
  const ticks: number[] = [];
  for (let i = a; i <= b; i++) ticks.push(base ** i);
  const pos = (v: number) => (Math.log(v) / Math.log(base) - a) / (b - a);
  return { ticks, pos };
}

/** Tick labels: powers of two from 1024 as "1k", "2k" (tokens), powers of ten from 1000 as "1k", "10k" (µs). */
function fmtTick(v: number, base: number): string {
  const k = base === 2 ? 1024 : 1000;
  if (v >= k) return `${v / k}k`;
  return v < 1 ? v.toPrecision(1) : String(v);
}

function panel(x0: number, title: string, phase: PhaseName, all: Series[]): string {
  const tokens = all.flatMap((s) => s.pts.map((p) => p.tokens));
  const times = all.flatMap((s) => s.pts.map((p) => p.us));
  const parts: string[] = [`<g data-panel="${phase}">`];
  parts.push(
    `<text x="${x0 + PANEL_W / 2}" y="${TOP - 12}" text-anchor="middle" font-size="15">${escapeXml(title)}</text>`,
  );
  parts.push(`<rect x="${x0}" y="${TOP}" width="${PANEL_W}" height="${PANEL_H}" fill="none" stroke="#444"/>`);
  if (tokens.length === 0) {
    parts.push(
      `<text x="${x0 + PANEL_W / 2}" y="${TOP + PANEL_H / 2}" text-anchor="middle" fill="#888">no data</text></g>`,
    );
    return parts.join("\n");
  }
  const xa = logAxis(Math.min(...tokens), Math.max(...tokens), 2);
  const ya = logAxis(Math.min(...times), Math.max(...times), 10);
  const px = (t: number) => x0 + xa.pos(t) * PANEL_W;
  const py = (u: number) => TOP + PANEL_H - ya.pos(u) * PANEL_H;
  for (const t of xa.ticks) {
    const x = px(t).toFixed(1);
    parts.push(`<line x1="${x}" y1="${TOP}" x2="${x}" y2="${TOP + PANEL_H}" stroke="#eee"/>`);
    parts.push(
      `<text x="${x}" y="${TOP + PANEL_H + 16}" text-anchor="middle" font-size="11">${fmtTick(t, 2)}</text>`,
    );
  }
  for (const u of ya.ticks) {
    const y = py(u).toFixed(1);
    parts.push(`<line x1="${x0}" y1="${y}" x2="${x0 + PANEL_W}" y2="${y}" stroke="#eee"/>`);
    parts.push(
      `<text x="${x0 - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" font-size="11">${fmtTick(u, 10)}</text>`,
    );
  }
  parts.push(
    `<text x="${x0 + PANEL_W / 2}" y="${TOP + PANEL_H + 36}" text-anchor="middle" font-size="12">tokens per rank</text>`,
  );
  parts.push(
    `<text transform="translate(${x0 - 50} ${TOP + PANEL_H / 2}) rotate(-90)" text-anchor="middle" font-size="12">median µs (slowest rank)</text>`,
  );
  for (const s of all) {
    const color = COLOR[s.layout] ?? "#333";
    const d = s.pts.map((p) => `${px(p.tokens).toFixed(1)},${py(p.us).toFixed(1)}`).join(" ");
    const dash = DASH[s.impl] ? ` stroke-dasharray="${DASH[s.impl]}"` : "";
    parts.push(
      `<polyline data-series="${s.layout}/${s.impl}" points="${d}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`,
    );
    for (const p of s.pts) {
      parts.push(
        `<circle data-series="${s.layout}/${s.impl}" cx="${px(p.tokens).toFixed(1)}" cy="${py(p.us).toFixed(1)}" r="3" fill="${color}"><title>${escapeXml(`${s.layout} ${s.impl} ${p.tokens} tokens: ${p.us.toFixed(1)} us`)}</title></circle>`,
      );
    }
  }
  parts.push("</g>");
  return parts.join("\n");
}

/**
 * Latency vs tokens per rank: dispatch and combine panels, each layout ours (solid) against NCCL
 * (dashed) and the peer libraries measured in the same run (dotted, dash-dot).
 */
export function renderSvg(r: BenchReport): string {
  const c = r.config;
  const title = `switchyard bench: ${c.ranks} ranks, hidden ${c.hidden}, ${c.experts} experts, top-${c.topK}, ${c.inputDtype} -> ${c.dispatchDtype} dispatch, bf16 combine`;
  const sub = `${r.device.name ?? "unknown GPU"} x ${r.device.gpus}; peer-write ${r.nvlink.minGBps?.toFixed(0) ?? "-"} GB/s; commit ${r.commit ?? "unknown"}; ${r.startedAt}`;
  const phases: [PhaseName, string][] = [
    ["dispatch", "dispatch (send + receive)"],
    ["combine", "combine (send + receive)"],
  ];
  const legend: string[] = [];
  const keys = [...new Set(r.points.map((p) => `${p.layout}/${p.impl}`))].sort();
  const entries = keys.map((k) => k.split("/") as [string, Impl]);
  const labels = entries.map(([layout, impl]) => `${layout}, ${NAME[impl] ?? impl}`);
  const slots = legendSlots(labels);
  const height = H + Math.max(0, ...slots.map((s) => s.row)) * LEGEND_ROW_H;
  entries.forEach(([layout, impl], i) => {
    const { x, row } = slots[i];
    const y = H - 30 + row * LEGEND_ROW_H;
    const dash = DASH[impl] ? ` stroke-dasharray="${DASH[impl]}"` : "";
    legend.push(
      `<line x1="${x}" y1="${y}" x2="${x + 30}" y2="${y}" stroke="${COLOR[layout] ?? "#333"}" stroke-width="2"${dash}/>`,
      `<text x="${x + 36}" y="${y}" dominant-baseline="middle" font-size="12">${escapeXml(labels[i])}</text>`,
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif">`,
    `<rect width="${W}" height="${height}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${W / 2}" y="40" text-anchor="middle" font-size="11" fill="#555">${escapeXml(sub)}</text>`,
    ...phases.map(([phase, label], i) => panel(LEFTS[i], label, phase, series(r.points, phase))),
    `<g data-legend="">`,
    ...legend,
    "</g>",
    "</svg>",
    "",
  ].join("\n");
}
