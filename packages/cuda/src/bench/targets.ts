import type { BenchReport, PointResult } from "./report.js";

/** One of issue 5's targets, checked against a report. */
export interface TargetCheck {
  target: string;
  measured: string;
  /** null: the report has no point to check it with. */
  met: boolean | null;
}

function point(r: BenchReport, layout: string, tokens: number, impl: string): PointResult | undefined {
  return r.points.find(
    (p) => p.layout === layout && p.tokens === tokens && p.impl === impl && p.errors.length === 0,
  );
}

const f = (v: number | undefined) => (v === undefined ? "-" : `${v.toFixed(1)} us`);

/**
 * Issue 5's targets (4 H200, DeepSeek-like config): masked 128 tokens dispatch <= 25 us, combine
 * <= 40 us, step >= 15x faster than NCCL; masked 1 token <= 12 us each; contiguous 4096 tokens
 * dispatch <= 340 us, combine <= 470 us with <= 24 SMs; masked 128-token buffers <= 400 MB per rank.
 */
export function checkTargets(r: BenchReport): TargetCheck[] {
  const out: TargetCheck[] = [];
  const le = (target: string, v: number | undefined, limit: number) =>
    out.push({ target, measured: f(v), met: v === undefined ? null : v <= limit });
  const m128 = point(r, "masked", 128, "switchyard");
  const n128 = point(r, "masked", 128, "nccl");
  le("masked 128 tok: dispatch <= 25 us (median, graph)", m128?.phases.dispatch?.median, 25);
  le("masked 128 tok: combine <= 40 us", m128?.phases.combine?.median, 40);
  const ours = m128?.phases.step?.median;
  const theirs = n128?.phases.step?.median;
  const ratio = ours && theirs ? theirs / ours : undefined;
  out.push({
    target: "masked 128 tok: step >= 15x faster than NCCL",
    measured: ratio === undefined ? "-" : `${ratio.toFixed(1)}x (${f(ours)} vs ${f(theirs)})`,
    met: ratio === undefined ? null : ratio >= 15,
  });
  const m1 = point(r, "masked", 1, "switchyard");
  le("masked 1 tok: dispatch <= 12 us", m1?.phases.dispatch?.median, 12);
  le("masked 1 tok: combine <= 12 us", m1?.phases.combine?.median, 12);
  const c4k = point(r, "contiguous", 4096, "switchyard");
  le("contiguous 4096 tok: dispatch <= 340 us", c4k?.phases.dispatch?.median, 340);
  le("contiguous 4096 tok: combine <= 470 us", c4k?.phases.combine?.median, 470);
  out.push({
    target: "contiguous 4096 tok: <= 24 SMs",
    measured: c4k
      ? `${c4k.sms} SMs, NVLink ${((c4k.nvlinkFraction.dispatch ?? 0) * 100).toFixed(0)}% / ${((c4k.nvlinkFraction.combine ?? 0) * 100).toFixed(0)}%`
      : "-",
    met: c4k ? (c4k.sms ?? Number.POSITIVE_INFINITY) <= 24 : null,
  });
  const mem = m128?.memory.deviceBytes;
  out.push({
    target: "masked 128 tok: buffers <= 400 MB per rank",
    measured: mem === undefined ? "-" : `${(mem / 1e6).toFixed(0)} MB`,
    met: mem === undefined ? null : mem <= 400e6,
  });
  return out;
}

export function formatTargets(checks: readonly TargetCheck[]): string {
  const w = Math.max(...checks.map((c) => c.target.length));
  return checks
    .map((c) => `${c.met === null ? "n/a " : c.met ? "MET " : "MISS"}  ${c.target.padEnd(w)}  ${c.measured}`)
    .join("\n");
}
