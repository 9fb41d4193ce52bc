"""Medians of the phase stamps a profiling build prints (kernels/phase_clock.cuh), from step.c's
output: one `syclock` line per stage kernel launch, eager steps first, then graph replays.

    step masked:1 --steps 100 | python3 phases.py --steps 100

Per kernel and mode: the kernel's time from its first stamp to its last (%globaltimer) and each
phase between marks, its cycles turned into ns by that launch's own cycles per ns. The printing
block is block 0, or the kernel's last block in a build with SWITCHYARD_CUDA_PHASE_CLOCK=last (the
lean receive's tables block, combine recv's check block), or with =ender the block that completed
the kernel's grid counter (the sends' and combine recv's: the block that ends the stage). Lines
that carry the printing block's start and the previous kernel's last block end (%globaltimer) also
give, from consecutive launches, the gap before each kernel (the kernel before it ended to this
one's printing block starting: the launch, the printing block's place in the launch order, and for
the first kernel of a step whatever ran between steps) and the time the kernel ran after its
printing block ended (its other blocks).
"""

from __future__ import annotations

import argparse
import sys
from statistics import median

WARMUP = 50
PHASES = {
    "dispatchSend": ("plan: setup, tokens before the chunk", "plan: the walk", "plan: barrier, totals", "count words", "warp 0's rows and records", "the other warps + fence", "signals"),
    "dispatchRecv": ("tables (wait, counts, scans), or the signals (lean)", "placement (warp 0's view)"),
    "combineSend": ("record counts", "warp 0's partials", "the other warps + fence", "signals"),
    "combineRecv": ("warp 0 polls every signal", "warp 0's sums", "the other warps, check + fence", "step advance"),
    "contigSend": ("plan: the chunk counted, every block's counts in, totals out", "plan: the walk", "plan: barrier",
                   "every rank's counts, row starts", "warp 0's rows and records", "the other warps + fence", "signals"),
    "contigRecv": ("tables (the wait, counts, scans)", "warp 0's fan-out", "padding rows' meta (thread 0's share)", "the counts named"),
}


def stamps(text: str):
    """Each whole stamp line's (kernel, ns, marks, start, previous end), in order. Ranks that share
    one output may cut each other's lines apart, so the text is read record by record ("syclock" and
    its 12 fields: kernel, epoch, ns, n, 8 marks; then, from newer builds, block 0's start and the
    previous kernel's last block end, else None), and a record that does not hold together (a field
    not a number, n outside 1..8, marks not rising, a mark set past n) is skipped."""
    for chunk in text.split("syclock ")[1:]:
        f = chunk.split()[:12]
        if len(f) < 12:
            continue
        line = chunk.split("\n", 1)[0].split()  # the two newer fields only on a line left whole
        try:
            ns, n = float(f[2]), int(f[3])
            marks = [float(x) for x in f[4:12]]
            start, prev = (float(line[12]), float(line[13])) if len(line) == 14 else (None, None)
        except ValueError:
            continue
        if not 1 <= n <= 8 or ns <= 0 or any(m != 0 for m in marks[n:]):
            continue
        used = marks[:n]
        if used[0] <= 0 or any(b < a for a, b in zip(used, used[1:])):
            continue
        yield f[0], ns, used, start, prev


def surroundings(lines):
    """Per line: (gap before it, time after its printing block), ns, or None where a line lacks the
    %globaltimer fields or a neighbour (the previous end is 0 before any kernel has ended)."""
    out = []
    for i, (_, ns, _, start, prev) in enumerate(lines):
        gap = start - prev if start is not None and prev else None
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        after = None
        if start is not None and nxt is not None and nxt[4] is not None and nxt[4] >= start + ns:
            after = nxt[4] - (start + ns)
        out.append((gap, after))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, required=True,
                    help="step.c's --steps; 0: every launch after the first 50 as one window (the bench's output, all ranks)")
    ap.add_argument("input", nargs="?", default="-")
    a = ap.parse_args(argv)
    text = sys.stdin.read() if a.input == "-" else open(a.input).read()
    runs: dict[str, list[tuple[float, list[float], float | None, float | None]]] = {}
    lines = list(stamps(text))
    for (kernel, ns, marks, _, _), (gap, after) in zip(lines, surroundings(lines)):
        per_ns = marks[-1] / ns
        edges = [0.0, *marks]
        runs.setdefault(kernel, []).append((ns, [(edges[i + 1] - edges[i]) / per_ns for i in range(len(marks))], gap, after))
    if not runs:
        print("phases.py: no syclock lines (was the library built with SWITCHYARD_CUDA_PHASE_CLOCK=1?)", file=sys.stderr)
        return 1
    per = WARMUP + a.steps
    out = ["| kernel | mode | phase | median ns |", "|---|---|---|---:|"]
    for kernel, rows in runs.items():
        windows = (("all", rows[WARMUP:]),) if a.steps == 0 else (("eager", rows[WARMUP:per]), ("graph", rows[per + WARMUP:2 * per]))
        for mode, part in windows:
            if not part:
                continue
            out.append(f"| {kernel} | {mode} | whole kernel (first to last stamp) | {median(r[0] for r in part):.0f} |")
            names = PHASES.get(kernel, ())
            for i in range(min(len(r[1]) for r in part)):
                label = names[i] if i < len(names) else f"phase {i + 1}"
                out.append(f"| {kernel} | {mode} | {label} | {median(r[1][i] for r in part):.0f} |")
            for j, label in ((2, "gap before (the kernel before it ended to the printing block's start)"),
                             (3, "after the printing block (to the kernel's last block end)")):
                vals = [r[j] for r in part if r[j] is not None]
                if vals:
                    out.append(f"| {kernel} | {mode} | {label} | {median(vals):.0f} |")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
