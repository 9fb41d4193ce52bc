import type { LayoutKind } from "@switchyard/core";
import type { Impl } from "./report.js";

/**
 * The peer libraries the bench can measure beside this library, and the layout each is compared on.
 * deepep-ht-caller: DeepEP's normal kernels plus the work their caller does in torch (the cast, the
 * permute per expert, the weighted local sum), like for like with this library's contiguous layout.
 * switchyard-py: this library through its Python package, timed by the peers' harness (one graph per
 * call, events between the calls), like for like with deepep-ll and pplx in their timing method.
 */
export const PEER_IMPLS = ["deepep-ll", "deepep-ht", "deepep-ht-caller", "pplx", "switchyard-py"] as const;
export type PeerImpl = (typeof PEER_IMPLS)[number];

export const PEER_LAYOUT: Record<PeerImpl, LayoutKind> = {
  "deepep-ll": "masked",
  "deepep-ht": "contiguous",
  "deepep-ht-caller": "contiguous",
  pplx: "masked",
  "switchyard-py": "masked",
};

/**
 * What `--peers` accepts: a library names all its rows ("deepep" = low latency, normal, and normal with
 * its caller's work); every impl names itself alone.
 */
export const PEER_ALIASES: Readonly<Record<string, readonly PeerImpl[]>> = {
  deepep: ["deepep-ll", "deepep-ht", "deepep-ht-caller"],
  ...Object.fromEntries(PEER_IMPLS.map((i) => [i, [i]])),
};

export function isPeer(impl: Impl): impl is PeerImpl {
  return (PEER_IMPLS as readonly string[]).includes(impl);
}

/** `--peers` to peer names in PEER_IMPLS order; null when a name is unknown. "none" is the empty list. */
export function parsePeers(v: string): PeerImpl[] | null {
  if (v.trim() === "none") return [];
  const out = new Set<PeerImpl>();
  for (const name of v.split(",").map((s) => s.trim())) {
    const impls = Object.hasOwn(PEER_ALIASES, name) ? PEER_ALIASES[name] : undefined;
    if (!impls) return null;
    for (const i of impls) out.add(i);
  }
  return PEER_IMPLS.filter((i) => out.has(i));
}

/** A peer's state in the report: whether it ran, its version, or why not. */
export interface PeerState {
  impl: PeerImpl;
  available: boolean;
  version: string | null;
  reason: string | null;
}
