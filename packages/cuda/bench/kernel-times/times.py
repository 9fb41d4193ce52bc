"""Medians of ncu's per-kernel durations (gpu__time_duration.sum, CSV) for step.c's four stage
kernels, eager and graph replay apart.

    python3 times.py --point masked:1 --eager eager.csv --graph graph.csv
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from statistics import median

STAGES = ("dispatchSend", "dispatchRecv", "combineSend", "combineRecv")
# A kernel a stage, by a part of its name: as the stage calls launch them today
# (sy::kernels::dispatch_send<...>, dispatch_recv<kLean>, ...), and as earlier builds named them
# (dispatch_recv untemplated, ...dispatchSendKernel).
STAGE_KERNELS = {"::dispatch_send<": "dispatchSend", "::dispatch_recv<": "dispatchRecv", "::dispatch_recv(": "dispatchRecv",
                 "::combine_send<": "combineSend", "::combine_recv<": "combineRecv", **{s: s for s in STAGES}}
# One kernel function a half (sy::kernels::dispatch / combine) launched for one stage at a time, as
# step.c calls the four phases: its launches alternate send, receive.
HALVES = {"::dispatch<": ("dispatchSend", "dispatchRecv"), "::combine<": ("combineSend", "combineRecv")}


def durations(path: str) -> dict[str, list[float]]:
    """Kernel stage -> durations in us. ncu prints its own lines before the CSV: start at the header."""
    text = open(path).read()
    start = text.find('"ID"')
    if start < 0:
        raise SystemExit(f"{path}: no ncu CSV in it")
    out: dict[str, list[float]] = {s: [] for s in STAGES}
    launches = {half: 0 for half in HALVES}
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = row["Kernel Name"]
        stage = next((v for k, v in STAGE_KERNELS.items() if k in name), None)
        half = next((h for h in HALVES if h in name), None)
        if stage is None and half is not None:
            stage = HALVES[half][launches[half] % 2]
            launches[half] += 1
        if stage is None:
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "ns")
        out[stage].append(value / 1e3 if unit in ("ns", "nsecond") else value * 1e3 if unit in ("ms", "msecond") else value)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--point", required=True)
    ap.add_argument("--eager", required=True)
    ap.add_argument("--graph", required=True)
    a = ap.parse_args(argv)
    modes = {"eager": durations(a.eager), "graph": durations(a.graph)}
    lines = [f"## {a.point}: each stage kernel by itself (ncu gpu__time_duration, median us)", "",
             "| kernel | eager | graph | samples |", "|---|---:|---:|---:|"]
    for s in STAGES:
        e, g = modes["eager"][s], modes["graph"][s]
        if not e or not g:
            print(f"{a.point}: no {s} kernels profiled (eager {len(e)}, graph {len(g)})", file=sys.stderr)
            return 1
        lines.append(f"| {s} | {median(e):.2f} | {median(g):.2f} | {len(e)} / {len(g)} |")
    total = {m: sum(median(v[s]) for s in STAGES) for m, v in modes.items()}
    lines.append(f"| all four | {total['eager']:.2f} | {total['graph']:.2f} | |")
    print("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
