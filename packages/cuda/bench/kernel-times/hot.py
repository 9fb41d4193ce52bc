"""The SASS instructions with the most stall samples in an Nsight Compute source page (CSV, as
`ncu --import R --page source --print-source sass --csv` writes it; one table a kernel, each
starting with its header row), with each one's leading stall reasons.

    python3 hot.py sass.csv [--top 40]
"""

import argparse
import csv
import sys


def tables(path):
    """Each kernel's rows as dicts (a header row starts a table)."""
    header, rows = None, []
    with open(path, newline="") as f:
        for rec in csv.reader(f):
            if not rec:
                continue
            if "Source" in rec and ("Address" in rec or "# Address" in rec):
                if header and rows:
                    yield header, rows
                header, rows = rec, []
            elif header and len(rec) == len(header):
                rows.append(dict(zip(header, rec)))
    if header and rows:
        yield header, rows


def number(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    found = False
    seen = set()
    for header, rows in tables(a.csv):
        found = True
        key = tuple(r.get("Address", r.get("# Address", "")) for r in rows)
        if key in seen:  # the page can list a kernel's table twice
            continue
        seen.add(key)
        samples = next((h for h in header if h.startswith("Warp Stall Sampling (All")), None)
        if samples is None:
            print("no stall-sampling column in:", header, file=sys.stderr)
            continue
        reasons = [h for h in header if h.startswith("stall_") or h.startswith("smsp__pcsamp_warps_issue_stalled")]
        total = sum(number(r[samples]) for r in rows) or 1.0
        print(f"== {len(rows)} SASS lines, {total:.0f} stall samples")
        for r in sorted(rows, key=lambda r: -number(r[samples]))[: a.top]:
            top = sorted(((number(r[h]), h) for h in reasons), reverse=True)[:3]
            why = ", ".join(f"{h.replace('smsp__pcsamp_warps_issue_stalled_', '')} {v:.0f}" for v, h in top if v > 0)
            addr = r.get("Address", r.get("# Address", ""))
            print(f"{100 * number(r[samples]) / total:5.1f}%  {addr:>6}  {r['Source'][:70]:70}  {why}")
    if not found:
        print("no source table found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
