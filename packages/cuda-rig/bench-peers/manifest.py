"""The bench's inputs for the peer libraries: a manifest and each rank's routing, written by the
TypeScript bench (src/bench/peerInputs.ts). Pure Python (no torch), so it can be checked anywhere.

Folder layout:
  manifest.json                      config, timing options, points (see PeerManifest in peerInputs.ts)
  <layout>-<tokens>/set<S>-rank<R>.idx   topk_idx    [T, K] int32, little-endian
  <layout>-<tokens>/set<S>-rank<R>.w     topk_weights [T, K] float32, little-endian
"""

import array
import json
import os
import sys

MANIFEST_VERSION = 1


def load_manifest(folder):
    with open(os.path.join(folder, "manifest.json"), encoding="utf8") as f:
        m = json.load(f)
    if m.get("version") != MANIFEST_VERSION:
        raise ValueError(f"manifest version {m.get('version')}: this script reads {MANIFEST_VERSION}")
    m["folder"] = folder
    return m


def _read(path, typecode, count):
    a = array.array(typecode)
    with open(path, "rb") as f:
        a.fromfile(f, count)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def load_routing(m, point, set_index, rank):
    """(topk_idx, topk_weights) of `rank` for input set `set_index`: flat arrays of T * K."""
    n = point["tokens"] * m["topK"]
    base = os.path.join(m["folder"], point["dir"], f"set{set_index}-rank{rank}")
    return _read(base + ".idx", "i", n), _read(base + ".w", "f", n)


def expected_counts(m, point, set_index, rank):
    """Rows each local expert of `rank` receives in input set `set_index` (summed over sources)."""
    local = m["experts"] // m["ranks"]
    counts = [0] * local
    for src in range(m["ranks"]):
        idx, _ = load_routing(m, point, set_index, src)
        for e in idx:
            if e >= 0 and e // local == rank:
                counts[e % local] += 1
    return counts
