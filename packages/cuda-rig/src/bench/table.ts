import { PEER_IMPLS } from "./peers.js";
import type { BenchReport, Impl, PhaseName, PointResult } from "./report.js";

interface Column {
  head: string;
  width: number;
  cell: (p: PointResult) => string;
}

const us = (p: PointResult, phase: PhaseName, stat: "median" | "p90" | "p99" = "median") => {
  const v = p.phases[phase]?.[stat];
  return v === undefined || Number.isNaN(v) ? "-" : v < 100 ? v.toFixed(1) : v.toFixed(0);
};
const num = (v: number | null, digits = 0) => (v === null ? "-" : v.toFixed(digits));
const pct = (v: number | null) => (v === null ? "-" : `${(v * 100).toFixed(0)}%`);
const mb = (b: number) => (b > 0 ? `${(b / 1e6).toFixed(0)} MB` : "-");

/** Every implementation in the order the table lists them at a point: ours, NCCL, the peers. */
const IMPL_ORDER: Impl[] = ["switchyard", "nccl", ...PEER_IMPLS];

/** The columns, in order. Times are the slowest rank's median over steps, in microseconds. */
export const COLUMNS: Column[] = [
  { head: "layout", width: 10, cell: (p) => p.layout },
  { head: "tokens", width: 6, cell: (p) => String(p.tokens) },
  { head: "impl", width: Math.max(...IMPL_ORDER.map((i) => i.length)), cell: (p) => p.impl },
  { head: "disp us", width: 7, cell: (p) => us(p, "dispatch") },
  { head: "send", width: 6, cell: (p) => us(p, "dispatchSend") },
  { head: "recv", width: 6, cell: (p) => us(p, "dispatchRecv") },
  { head: "comb us", width: 7, cell: (p) => us(p, "combine") },
  { head: "send", width: 6, cell: (p) => us(p, "combineSend") },
  { head: "recv", width: 6, cell: (p) => us(p, "combineRecv") },
  { head: "step p50", width: 8, cell: (p) => us(p, "step") },
  { head: "p90", width: 6, cell: (p) => us(p, "step", "p90") },
  { head: "p99", width: 6, cell: (p) => us(p, "step", "p99") },
  { head: "GB/s d/c", width: 9, cell: (p) => `${num(p.gbps.dispatch)}/${num(p.gbps.combine)}` },
  {
    head: "NVL d/c",
    width: 9,
    cell: (p) => `${pct(p.nvlinkFraction.dispatch)}/${pct(p.nvlinkFraction.combine)}`,
  },
  { head: "SMs", width: 4, cell: (p) => (p.sms !== null ? String(p.sms) : p.impl === "nccl" ? "nccl" : "-") },
  { head: "mem/rank", width: 9, cell: (p) => mb(p.memory.deviceBytes) },
  { head: "", width: 0, cell: (p) => (p.errors.length ? `ERRORS: ${p.errors.slice(0, 2).join(" | ")}` : "") },
];

function line(cells: string[]): string {
  return cells
    .map((c, i) => (i < 3 ? c.padEnd(COLUMNS[i].width) : c.padStart(COLUMNS[i].width)))
    .join("  ")
    .trimEnd();
}

export function tableHeader(): string {
  const head = line(COLUMNS.map((c) => c.head));
  return `${head}\n${"-".repeat(head.length)}`;
}

export function tableRow(p: PointResult): string {
  return line(COLUMNS.map((c) => c.cell(p)));
}

/** The whole table: header, then one row per point. */
export function formatTable(points: readonly PointResult[]): string {
  return [tableHeader(), ...points.map(tableRow)].join("\n");
}

/** The points by layout (masked first), tokens, then implementation (ours, NCCL, the peers). */
export function sortedPoints(points: readonly PointResult[]): PointResult[] {
  const layout = (p: PointResult) => (p.layout === "masked" ? 0 : 1);
  return [...points].sort(
    (a, b) =>
      layout(a) - layout(b) || a.tokens - b.tokens || IMPL_ORDER.indexOf(a.impl) - IMPL_ORDER.indexOf(b.impl),
  );
}

/** Under the table: each peer's timing method and notes, once per distinct text. */
export function peerNotes(r: BenchReport): string[] {
  const out: string[] = [];
  for (const impl of PEER_IMPLS) {
    const rows = r.points.filter((p) => p.impl === impl && Object.keys(p.phases).length > 0);
    const state = r.peers?.find((s) => s.impl === impl);
    if (rows.length === 0) {
      if (state?.reason) out.push(`${impl}: ${state.reason}`);
      continue;
    }
    const texts = new Set(rows.flatMap((p) => [p.timing ?? "", ...(p.notes ?? [])]).filter((t) => t !== ""));
    out.push(`${impl}${state?.version ? ` ${state.version}` : ""}: ${[...texts].join("; ")}`);
  }
  return out;
}
