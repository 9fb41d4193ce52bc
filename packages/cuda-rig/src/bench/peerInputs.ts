import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchOptions } from "./args.js";
import type { BenchPoint } from "./plan.js";
import { benchRouting, type Routing } from "./routing.js";

/** bench-peers/manifest.py reads this version; raise both together. */
export const PEER_MANIFEST_VERSION = 1;

/** manifest.json of a peer inputs folder: the config, timing options and the points (bench-peers/manifest.py). */
export interface PeerManifest {
  version: typeof PEER_MANIFEST_VERSION;
  ranks: number;
  hidden: number;
  experts: number;
  topK: number;
  inputDtype: string;
  dispatchDtype: string;
  alignment: number;
  sms: number;
  warmup: number;
  steps: number;
  rotate: number;
  seed: number;
  graphs: boolean;
  points: { layout: string; tokens: number; dir: string }[];
}

/** Little-endian bytes of a typed array (the machines are little-endian; written explicitly anyway). */
function le(a: Int32Array | Float32Array): Buffer {
  const out = Buffer.alloc(a.length * 4);
  a.forEach((v, i) => {
    if (a instanceof Int32Array) out.writeInt32LE(v, i * 4);
    else out.writeFloatLE(v, i * 4);
  });
  return out;
}

/**
 * Writes the peers' inputs into `dir`: manifest.json and, per point, input set and rank, the routing
 * this bench's own points use (benchRouting: the same seed, sets and ranks), as `<layout>-<tokens>/
 * set<S>-rank<R>.idx` (topk_idx [T, K] int32) and `.w` (topk_weights [T, K] float32). Returns every
 * point's routings (routings[set][rank]) for the byte counts.
 */
export function writePeerInputs(
  dir: string,
  o: BenchOptions,
  ranks: number,
  points: readonly BenchPoint[],
): Map<BenchPoint, Routing[][]> {
  const manifest: PeerManifest = {
    version: PEER_MANIFEST_VERSION,
    ranks,
    hidden: o.hidden,
    experts: o.experts,
    topK: o.topK,
    inputDtype: o.inputDtype,
    dispatchDtype: o.dispatchDtype,
    alignment: o.alignment,
    sms: o.sms,
    warmup: o.warmup,
    steps: o.steps,
    rotate: o.rotate,
    seed: o.seed,
    graphs: o.graphs,
    points: [],
  };
  const out = new Map<BenchPoint, Routing[][]>();
  for (const p of points) {
    const sub = `${p.layout}-${p.tokens}`;
    mkdirSync(join(dir, sub), { recursive: true });
    const sets: Routing[][] = [];
    for (let s = 0; s < o.rotate; s++) {
      const all = Array.from({ length: ranks }, (_, r) => benchRouting(p.config, o.seed, s, r));
      all.forEach((rt, r) => {
        writeFileSync(join(dir, sub, `set${s}-rank${r}.idx`), le(rt.topkIdx));
        writeFileSync(join(dir, sub, `set${s}-rank${r}.w`), le(rt.topkWeights));
      });
      sets.push(all);
    }
    out.set(p, sets);
    manifest.points.push({ layout: p.layout, tokens: p.tokens, dir: sub });
  }
  writeFileSync(join(dir, "manifest.json"), `${JSON.stringify(manifest, null, 1)}\n`);
  return out;
}
