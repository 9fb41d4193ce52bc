"""One process per GPU: torch.distributed over NCCL (and gloo for host objects), the peer's
session, every point of its layout; rank 0 prints each point with every rank's samples."""

import datetime
import inspect
import os
import sys
import traceback

import torch
import torch.distributed as dist

from emit import emit
from manifest import load_manifest

# Every wait is bounded: collectives give up after this (the bench's timeout ends the script first).
COLLECTIVE_TIMEOUT = datetime.timedelta(seconds=120)


def init(rank, world, port):
    torch.cuda.set_device(rank)
    kw = {
        "backend": "cpu:gloo,cuda:nccl",
        "init_method": f"tcp://127.0.0.1:{port}",
        "rank": rank,
        "world_size": world,
        "timeout": COLLECTIVE_TIMEOUT,
    }
    if "device_id" in inspect.signature(dist.init_process_group).parameters:
        kw["device_id"] = torch.device("cuda", rank)
    dist.init_process_group(**kw)
    return dist.new_group(list(range(world)))


def run_rank(rank, module_name, folder, port):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    peer = __import__(module_name)
    m = load_manifest(folder)
    group = init(rank, m["ranks"], port)
    points = [p for p in m["points"] if p["layout"] == peer.LAYOUT]
    current = None
    try:
        session = peer.Session(m, points, group)
        for p in points:
            current = p
            result = session.point(p)
            free, total = torch.cuda.mem_get_info()
            mine = {
                "rank": rank,
                "samplesUs": result["samplesUs"],
                "deviceBytes": result["deviceBytes"],
                "deviceUsedBytes": total - free,
                "sms": result["sms"],
                "errors": result["errors"],
            }
            ranks = [None] * m["ranks"]
            dist.all_gather_object(ranks, mine)
            if rank == 0:
                emit(
                    "point",
                    impl=peer.IMPL,
                    layout=p["layout"],
                    tokens=p["tokens"],
                    mode=result["mode"],
                    timing=result["timing"],
                    notes=result["notes"],
                    ranks=ranks,
                )
        current = None
        session.close()
        dist.barrier()
        dist.destroy_process_group()
    except Exception as e:
        where = f"{current['layout']} {current['tokens']}" if current else "setup"
        emit(
            "error",
            impl=peer.IMPL,
            layout=current["layout"] if current else None,
            tokens=current["tokens"] if current else None,
            error=f"rank {rank} ({where}): {type(e).__name__}: {e}".strip(),
        )
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)  # the launcher ends the other ranks
