import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchOptions } from "./args.js";
import { writePeerInputs } from "./peerInputs.js";
import { peerPoint, peerSkipped } from "./peerPoints.js";
import { runPeerProcess } from "./peerProcess.js";
import { PEER_LAYOUT, type PeerImpl, type PeerState } from "./peers.js";
import type { BenchPoint } from "./plan.js";
import type { PointResult } from "./report.js";

/** bench-peers/peers.py beside dist/ (and src/) in the package. */
export const PEER_SCRIPT = fileURLToPath(new URL("../../bench-peers/peers.py", import.meta.url));

export interface PeerSweep {
  o: BenchOptions;
  ranks: number;
  /** Why no peer can run here (one rank, ranks sharing a GPU), or null. */
  unavailable: string | null;
  points: readonly BenchPoint[];
  nvlinkGBps: number | null;
  script?: string;
  /** Every peer point as it is known: measured, failed or skipped. */
  onPoint(p: PointResult): void;
}

const key = (layout: string, tokens: number) => `${layout}:${tokens}`;

/** Why the points a peer did not report were not measured. */
function endReason(
  impl: PeerImpl,
  end: Awaited<ReturnType<typeof runPeerProcess>>,
  timeoutS: number,
): string {
  if (end.spawnError) return end.spawnError;
  if (end.timedOut) return `${impl} did not finish within --peer-timeout-s ${timeoutS}`;
  const how = end.signal ? `signal ${end.signal}` : `exit code ${end.code}`;
  return `${impl} ended (${how})${end.tail ? `: ${end.tail.split("\n").slice(-3).join(" | ")}` : ""}`;
}

/**
 * Measures each peer of `--peers` on its layout's points, one peer script run each, after this
 * library's sweep: the same config, routing (files written from benchRouting), token counts, steps
 * and input sets. Every point gets a row: measured, or "skipped: <reason>". Returns each peer's state.
 */
export async function sweepPeers(s: PeerSweep): Promise<PeerState[]> {
  const { o } = s;
  const states: PeerState[] = [];
  const wanted = o.peers.filter((impl) => s.points.some((p) => p.layout === PEER_LAYOUT[impl]));
  if (wanted.length === 0) return states;
  const dir = s.unavailable === null ? mkdtempSync(join(tmpdir(), "switchyard-peers-")) : null;
  const usedLayouts = new Set(wanted.map((i) => PEER_LAYOUT[i]));
  const routings = dir
    ? writePeerInputs(
        dir,
        o,
        s.ranks,
        s.points.filter((p) => usedLayouts.has(p.layout)),
      )
    : null;
  try {
    for (const impl of wanted) {
      const pts = s.points.filter((p) => p.layout === PEER_LAYOUT[impl]);
      if (dir === null || routings === null) {
        const reason = s.unavailable ?? "no inputs";
        for (const p of pts) s.onPoint(peerSkipped(p, impl, reason));
        states.push({ impl, available: false, version: null, reason });
        continue;
      }
      const done = new Set<string>();
      let version: string | null = null;
      let skip: string | null = null;
      let stopped: string | null = null;
      const end = await runPeerProcess({
        python: o.python,
        script: s.script ?? PEER_SCRIPT,
        inputs: dir,
        impl,
        timeoutMs: o.peerTimeoutS * 1000,
        onLine: (l) => {
          if (l.impl !== impl) return;
          if (l.kind === "start") version = l.version;
          else if (l.kind === "skip") skip = l.reason;
          else if (l.kind === "point" || l.kind === "error") {
            const p = pts.find(
              (q) => l.layout !== null && key(q.layout, q.tokens) === key(l.layout, l.tokens ?? -1),
            );
            if (l.kind === "error") stopped ??= l.error;
            if (!p || done.has(key(p.layout, p.tokens))) return;
            done.add(key(p.layout, p.tokens));
            s.onPoint(
              l.kind === "point"
                ? peerPoint(p, impl, l, routings.get(p) ?? [], s.nvlinkGBps)
                : peerSkipped(p, impl, l.error),
            );
          }
        },
      });
      const reason = skip ?? (stopped ? `${impl} stopped: ${stopped}` : endReason(impl, end, o.peerTimeoutS));
      for (const p of pts) if (!done.has(key(p.layout, p.tokens))) s.onPoint(peerSkipped(p, impl, reason));
      const ok = skip === null && stopped === null && end.code === 0 && !end.timedOut;
      states.push({
        impl,
        available: skip === null && end.spawnError === null,
        version,
        reason: ok ? null : reason,
      });
    }
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  return states;
}
