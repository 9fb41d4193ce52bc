"""What the Python package adds to a step over C: step.c's and step.py's JSON, run in alternation.

    python3 report.py --c c-1.json c-2.json c-3.json --python py-1.json py-2.json py-3.json \
        [--device "..."] [--commit "..."] [--json out.json] [--limit-us 5]

Per point and round: the median step of each driver (eager: the four calls then the check; graph:
the replay then the check), their difference spread over the four phases, and each call's own
host time. Prints a Markdown report; exits 1 when, at some point and mode, the median over rounds
of the added time per phase passes the limit.
"""

from __future__ import annotations

import argparse
import json
import sys
from statistics import median

PHASES = ("dispatch_send", "dispatch_recv", "combine_send", "combine_recv")


def load(paths: list[str]) -> list[dict]:
    out = []
    for p in paths:
        with open(p) as f:
            out.append(json.load(f))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--c", nargs="+", required=True, help="step.c's JSON, one per round")
    ap.add_argument("--python", nargs="+", required=True, help="step.py's JSON, one per round (same order)")
    ap.add_argument("--device", default="unknown device")
    ap.add_argument("--commit", default="unknown commit")
    ap.add_argument("--json", help="write the comparison here too")
    ap.add_argument("--limit-us", type=float, default=5.0, help="most a phase may add (default 5)")
    a = ap.parse_args(argv)
    if len(a.c) != len(a.python):
        ap.error(f"{len(a.c)} C runs but {len(a.python)} Python runs: give one of each per round")
    cs, pys = load(a.c), load(a.python)
    rows, calls = [], []
    for rnd, (c, py) in enumerate(zip(cs, pys), start=1):
        if c.get("experts") != py.get("experts"):
            raise SystemExit(f"round {rnd}: C ran {c.get('experts')} experts, Python {py.get('experts')}")
        if len(c["points"]) != len(py["points"]):
            raise SystemExit(f"round {rnd}: C ran {len(c['points'])} points, Python {len(py['points'])}")
        for pc, pp in zip(c["points"], py["points"]):
            if (pc["layout"], pc["tokens"]) != (pp["layout"], pp["tokens"]):
                raise SystemExit(f"round {rnd}: points differ ({pc['layout']}:{pc['tokens']} vs {pp['layout']}:{pp['tokens']})")
            name = f"{pc['layout']} {pc['tokens']}"
            for mode in ("eager", "graph"):
                cm, pm = pc[mode]["step"]["median"], pp[mode]["step"]["median"]
                rows.append({"round": rnd, "point": name, "mode": mode, "cUs": cm, "pythonUs": pm,
                             "addedPerPhaseUs": round((pm - cm) / len(PHASES), 3)})
            for phase in PHASES:
                cm, pm = pc["eager"][phase]["median"], pp["eager"][phase]["median"]
                calls.append({"round": rnd, "point": name, "phase": phase, "cUs": cm, "pythonUs": pm,
                              "addedUs": round(pm - cm, 3)})
    # The verdict: per point and mode, the median over rounds (a round is one C and one Python process).
    verdicts = []
    for key in dict.fromkeys((r["point"], r["mode"]) for r in rows):
        of = [r for r in rows if (r["point"], r["mode"]) == key]
        added = median([r["addedPerPhaseUs"] for r in of])
        verdicts.append({"point": key[0], "mode": key[1], "cUs": median([r["cUs"] for r in of]),
                         "pythonUs": median([r["pythonUs"] for r in of]), "addedPerPhaseUs": round(added, 3),
                         "met": added <= a.limit_us})
    ok = all(v["met"] for v in verdicts)
    py0 = pys[0]
    out = [
        "# Python over C: host time a step adds",
        "",
        f"Device: {a.device}. Commit: {a.commit}. Library {cs[0].get('version', '?')}, torch {py0.get('torch', '?')}, "
        f"Python {py0.get('python', '?')}. One rank on one GPU; {cs[0]['points'][0]['steps']} steps per mode after warm-up; "
        f"{len(cs)} rounds, each a C process then a Python process. Medians in microseconds; limit {a.limit_us:g} us "
        "added per phase, judged on the median over rounds.",
        "",
        "## The step (wall time until the check returns), median over rounds",
        "",
        "C and Python are each the median of the rounds' medians; added per phase is the median of each",
        "round's own difference / 4, so the columns need not subtract to it exactly.",
        "",
        "| point | mode | C | Python | added per phase | |",
        "|---|---|---:|---:|---:|---|",
    ]
    for v in verdicts:
        out.append(f"| {v['point']} | {v['mode']} | {v['cUs']:.1f} | {v['pythonUs']:.1f} | "
                   f"{v['addedPerPhaseUs']:+.2f} | {'met' if v['met'] else 'MISS'} |")
    out += ["", "## Every round", "", "| round | point | mode | C | Python | added per phase |", "|---|---|---|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['round']} | {r['point']} | {r['mode']} | {r['cUs']:.1f} | {r['pythonUs']:.1f} | "
                   f"{r['addedPerPhaseUs']:+.2f} |")
    out += [
        "",
        "## Each call's host time (eager; the call returns once its work is enqueued)",
        "",
        "| round | point | phase | C | Python | added |",
        "|---|---|---|---:|---:|---:|",
    ]
    for r in calls:
        out.append(f"| {r['round']} | {r['point']} | {r['phase']} | {r['cUs']:.2f} | {r['pythonUs']:.2f} | {r['addedUs']:+.2f} |")
    out.append("")
    out.append(f"MET: at every point, eager and graph, the Python step adds at most {a.limit_us:g} us per phase over C" if ok
               else f"MISS: at some point or mode the Python step adds more than {a.limit_us:g} us per phase over C")
    print("\n".join(out))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": a.device, "commit": a.commit, "limitUs": a.limit_us, "verdicts": verdicts,
                       "rounds": rows, "calls": calls, "met": ok}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
