import type { PeerRank } from "./peerLines.js";
import type { PeerImpl } from "./peers.js";
import { aggregate, type BenchPoint, failedPoint } from "./plan.js";
import type { PointResult } from "./report.js";
import { meanRemoteBytes, type Routing } from "./routing.js";

/**
 * A peer's measured point, like this library's: the slowest rank of each step per phase, then
 * median / p90 / p99; bytes as BYTES_COUNTED defines them for the same routing (the work asked of
 * every implementation, not what the peer moves); memory the peer's buffers (layoutBytes 0: core's
 * layout is this library's).
 */
export function peerPoint(
  point: BenchPoint,
  impl: PeerImpl,
  line: { mode: "graph" | "eager"; timing: string; notes: string[]; ranks: PeerRank[] },
  routings: readonly Routing[][],
  nvlinkGBps: number | null,
): PointResult {
  const ranks = line.ranks.map((r) => {
    const bytes = meanRemoteBytes(point.config, routings, r.rank);
    return {
      ...r,
      remoteDispatchBytes: bytes.dispatchBytes,
      remoteCombineBytes: bytes.combineBytes,
      layoutBytes: 0,
      sms: r.sms ?? 0,
    };
  });
  const p = aggregate(point, impl, line.mode, ranks, nvlinkGBps);
  p.sms = line.ranks.some((r) => r.sms === null) ? null : p.sms;
  return { ...p, timing: line.timing, notes: line.notes };
}

/** A peer's point that was not measured: the reason, prefixed "skipped: " (a peer never fails the bench). */
export function peerSkipped(point: BenchPoint, impl: PeerImpl, reason: string): PointResult {
  const p = failedPoint(point, impl, "eager", reason.startsWith("skipped") ? reason : `skipped: ${reason}`);
  p.memory.layoutBytes = 0;
  return p;
}
