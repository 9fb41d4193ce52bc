import type { BenchReport, PointResult } from "./report.js";

/** One of the bench's performance targets, checked against a report. */
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
 * Protocol version 2's targets (DeepSeek-like config, one H200 / H100, stated for a 1-rank world):
 * masked 1 token dispatch <= 8 us, combine <= 8 us; masked 128 tokens dispatch <= 12 us, combine
 * <= 15 us; contiguous 4096 tokens dispatch <= 300 us, combine <= 350 us on <= 24 SMs, and a step
 * >= 2x faster than the NCCL baseline; buffers per rank: masked 128 <= 400 MB, contiguous 4096
 * <= 1.25 GB.
 */
export function checkTargets(r: BenchReport): TargetCheck[] {
  const out: TargetCheck[] = [];
  const le = (target: string, v: number | undefined, limit: number) =>
    out.push({ target, measured: f(v), met: v === undefined ? null : v <= limit });
  const m1 = point(r, "masked", 1, "switchyard");
  le("masked 1 tok: dispatch <= 8 us (median, graph)", m1?.phases.dispatch?.median, 8);
  le("masked 1 tok: combine <= 8 us", m1?.phases.combine?.median, 8);
  const m128 = point(r, "masked", 128, "switchyard");
  le("masked 128 tok: dispatch <= 12 us", m128?.phases.dispatch?.median, 12);
  le("masked 128 tok: combine <= 15 us", m128?.phases.combine?.median, 15);
  const c4k = point(r, "contiguous", 4096, "switchyard");
  const n4k = point(r, "contiguous", 4096, "nccl");
  le("contiguous 4096 tok: dispatch <= 300 us", c4k?.phases.dispatch?.median, 300);
  le("contiguous 4096 tok: combine <= 350 us", c4k?.phases.combine?.median, 350);
  out.push({
    target: "contiguous 4096 tok: <= 24 SMs",
    measured: c4k
      ? `${c4k.sms} SMs, NVLink ${((c4k.nvlinkFraction.dispatch ?? 0) * 100).toFixed(0)}% / ${((c4k.nvlinkFraction.combine ?? 0) * 100).toFixed(0)}%`
      : "-",
    met: c4k ? (c4k.sms ?? Number.POSITIVE_INFINITY) <= 24 : null,
  });
  const ours = c4k?.phases.step?.median;
  const theirs = n4k?.phases.step?.median;
  const ratio = ours && theirs ? theirs / ours : undefined;
  out.push({
    target: "contiguous 4096 tok: step >= 2x faster than NCCL",
    measured: ratio === undefined ? "-" : `${ratio.toFixed(2)}x (${f(ours)} vs ${f(theirs)})`,
    met: ratio === undefined ? null : ratio >= 2,
  });
  const mem = (p: PointResult | undefined, target: string, limit: number) => {
    const v = p?.memory.deviceBytes;
    out.push({
      target,
      measured: v === undefined ? "-" : `${(v / 1e6).toFixed(0)} MB`,
      met: v === undefined ? null : v <= limit,
    });
  };
  mem(m128, "masked 128 tok: buffers <= 400 MB per rank", 400e6);
  mem(c4k, "contiguous 4096 tok: buffers <= 1.25 GB per rank", 1.25e9);
  return out;
}

export function formatTargets(checks: readonly TargetCheck[]): string {
  const w = Math.max(...checks.map((c) => c.target.length));
  return checks
    .map((c) => `${c.met === null ? "n/a " : c.met ? "MET " : "MISS"}  ${c.target.padEnd(w)}  ${c.measured}`)
    .join("\n");
}
