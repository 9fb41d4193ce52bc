import type { PhaseName } from "./report.js";

/** What starts every line of the peer script meant for the bench (bench-peers/emit.py). */
export const PEER_PREFIX = "SWITCHYARD-PEER ";

/** One rank's part of a peer's point, as the peer script prints it. */
export interface PeerRank {
  rank: number;
  samplesUs: Partial<Record<PhaseName, number[]>>;
  deviceBytes: number;
  deviceUsedBytes: number;
  sms: number | null;
  errors: string[];
}

export type PeerLine =
  | { kind: "start"; impl: string; version: string | null }
  | { kind: "skip"; impl: string; reason: string }
  | {
      kind: "point";
      impl: string;
      layout: string;
      tokens: number;
      mode: "graph" | "eager";
      timing: string;
      notes: string[];
      ranks: PeerRank[];
    }
  | { kind: "error"; impl: string; layout: string | null; tokens: number | null; error: string }
  | { kind: "done"; impl: string };

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isStrs = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");

function rankOk(r: unknown): r is PeerRank {
  if (typeof r !== "object" || r === null) return false;
  const x = r as Record<string, unknown>;
  const samples = x.samplesUs as Record<string, unknown> | undefined;
  return (
    Number.isInteger(x.rank) &&
    typeof samples === "object" &&
    samples !== null &&
    Object.values(samples).every((s) => Array.isArray(s) && s.every(isNum)) &&
    isNum(x.deviceBytes) &&
    isNum(x.deviceUsedBytes) &&
    (x.sms === null || Number.isInteger(x.sms)) &&
    isStrs(x.errors)
  );
}

/**
 * One line of the peer script's stdout: the parsed message, null for any other line (the
 * libraries' own prints); throws a SyntaxError for a prefixed line that is not a valid message.
 */
export function parsePeerLine(line: string): PeerLine | null {
  if (!line.startsWith(PEER_PREFIX)) return null;
  const v = JSON.parse(line.slice(PEER_PREFIX.length)) as Record<string, unknown>;
  const bad = (why: string) => new SyntaxError(`parsePeerLine: ${why}: ${line.slice(0, 200)}`);
  if (typeof v !== "object" || v === null || typeof v.impl !== "string") throw bad("no impl");
  switch (v.kind) {
    case "start":
      return { kind: "start", impl: v.impl, version: typeof v.version === "string" ? v.version : null };
    case "done":
      return { kind: "done", impl: v.impl };
    case "skip":
      if (typeof v.reason !== "string") throw bad("skip without a reason");
      return { kind: "skip", impl: v.impl, reason: v.reason };
    case "error":
      if (typeof v.error !== "string") throw bad("error without a message");
      return {
        kind: "error",
        impl: v.impl,
        layout: typeof v.layout === "string" ? v.layout : null,
        tokens: isNum(v.tokens) ? v.tokens : null,
        error: v.error,
      };
    case "point": {
      if (typeof v.layout !== "string" || !Number.isInteger(v.tokens))
        throw bad("point without layout / tokens");
      if (v.mode !== "graph" && v.mode !== "eager") throw bad("mode is neither graph nor eager");
      if (typeof v.timing !== "string" || !isStrs(v.notes)) throw bad("point without timing / notes");
      if (!Array.isArray(v.ranks) || v.ranks.length === 0 || !v.ranks.every(rankOk)) throw bad("bad ranks");
      return {
        kind: "point",
        impl: v.impl,
        layout: v.layout,
        tokens: v.tokens as number,
        mode: v.mode,
        timing: v.timing,
        notes: v.notes,
        ranks: v.ranks,
      };
    }
    default:
      throw bad(`unknown kind ${String(v.kind)}`);
  }
}
