#!/usr/bin/env python3
"""Measures one peer library on the bench's points: `switchyard bench` runs it once per peer.

  python3 peers.py --inputs DIR --peer IMPL    one process per GPU; JSON lines (IMPL: one of --peer's choices)
  python3 peers.py --inputs DIR --describe     the inputs as read (no torch)

DIR is what src/bench/peerInputs.ts writes (manifest.json and each rank's routing). A peer whose
Python package does not import prints one "skip" line with the import error and exits 0.
"""

import argparse
import os
import socket
import sys

# Never NVLink multicast, in this process and the ones it starts.
for key, value in (("NVSHMEM_DISABLE_NVLS", "1"), ("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")):
    os.environ[key] = value
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from emit import emit  # noqa: E402
from manifest import expected_counts, load_manifest  # noqa: E402

MODULES = {
    "deepep-ll": "deepep_ll",
    "deepep-ht": "deepep_ht",
    "deepep-ht-caller": "deepep_ht_caller",
    "pplx": "pplx",
    "switchyard-py": "switchyard_py",
}


def describe(m):
    """Per point and input set, each rank's received count per local expert, from the files."""
    for p in m["points"]:
        for s in range(m["rotate"]):
            counts = [expected_counts(m, p, s, r) for r in range(m["ranks"])]
            emit("describe", layout=p["layout"], tokens=p["tokens"], set=s, counts=counts)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--peer", choices=sorted(MODULES))
    ap.add_argument("--describe", action="store_true")
    a = ap.parse_args()
    m = load_manifest(a.inputs)
    if a.describe:
        describe(m)
        return 0
    if a.peer is None:
        ap.error("--peer or --describe")
    try:
        import torch

        module = __import__(MODULES[a.peer])
        version = module.probe()
    except Exception as e:  # not installed or not built here: a skipped row, not a failed bench
        emit("skip", impl=a.peer, reason=f"{type(e).__name__}: {e}")
        return 0
    gpus = torch.cuda.device_count()
    if gpus < m["ranks"]:
        emit("skip", impl=a.peer, reason=f"{m['ranks']} ranks need {m['ranks']} GPUs, {gpus} visible")
        return 0
    emit("start", impl=a.peer, version=version, torch=torch.__version__)
    import torch.multiprocessing as mp

    import worker

    try:
        mp.spawn(worker.run_rank, args=(MODULES[a.peer], a.inputs, free_port()), nprocs=m["ranks"], join=True)
    except Exception as e:  # a rank failed: it printed its error line; the others were ended
        print(f"peers.py: {a.peer}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    emit("done", impl=a.peer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
