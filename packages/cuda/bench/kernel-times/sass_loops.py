"""The innermost loops of a kernel's SASS, as `cuobjdump -sass` prints it: for each function whose
name contains the given text, every backward branch that jumps over at least --min instructions (and
holds an instruction of opcode --with, if given) and holds no other such loop, with its instructions
counted by opcode. A stage loop's length is what
its arithmetic costs plus what the compiler adds around it (addresses, branches, predicates); the
counts are static (a branch not taken still counts).

    cuobjdump -sass libswitchyard_cuda.so | python3 sass_loops.py --function combine_send [--with FMUL] [--min 20] [--json]
"""

import argparse
import json
import re
import sys

FUNCTION = re.compile(r"^\s*Function : (\S+)")
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
TARGET = re.compile(r"\bBRA\b.*?(0x[0-9a-f]+)")


def functions(lines):
    """(name, [(address, text)]) for each function in the listing."""
    name, body = None, []
    for line in lines:
        m = FUNCTION.match(line)
        if m:
            if name is not None:
                yield name, body
            name, body = m.group(1), []
            continue
        m = INSTRUCTION.match(line)
        if m and name is not None:
            body.append((int(m.group(1), 16), m.group(2)))
    if name is not None:
        yield name, body


def opcode(text):
    """The instruction's opcode without its predicate and modifiers: '@!P0 LDS.128 R8, [R1]' -> 'LDS'."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def loops(body, least, having=None):
    """The innermost loops of at least `least` instructions (holding opcode `having`, if given):
    dicts with start, end, length, opcodes."""
    # A loop is its header (a backward branch's target) to its last back edge: a loop with a
    # `continue` has several back edges to one header.
    ends = {}
    for addr, text in body:
        m = TARGET.search(text)
        if m and int(m.group(1), 16) < addr:
            target = int(m.group(1), 16)
            ends[target] = max(addr, ends.get(target, addr))
    found = []
    for target, addr in ends.items():
        inside = [t for a, t in body if target <= a <= addr]
        if len(inside) >= least and (having is None or any(opcode(t) == having for t in inside)):
            found.append((target, addr, inside))
    innermost = [
        (s, e, inside)
        for s, e, inside in found
        if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2, _ in found)
    ]
    out = []
    for s, e, inside in sorted(innermost):
        counts = {}
        for t in inside:
            op = opcode(t)
            counts[op] = counts.get(op, 0) + 1
        out.append(
            {
                "start": hex(s),
                "end": hex(e),
                "instructions": len(inside),
                "opcodes": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            }
        )
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("listing", nargs="?", help="cuobjdump -sass output (default: stdin)")
    ap.add_argument("--function", required=True, help="text the function's (mangled) name contains")
    ap.add_argument("--min", type=int, default=20, help="fewest instructions a loop must hold")
    ap.add_argument("--with", dest="having", help="an opcode a loop must hold (e.g. FMUL: the sums' loops)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    lines = open(args.listing).readlines() if args.listing else sys.stdin.readlines()
    report = [
        {"function": name, "instructions": len(body), "loops": loops(body, args.min, args.having)}
        for name, body in functions(lines)
        if args.function in name
    ]
    if not report:
        print(f"sass_loops: no function whose name contains '{args.function}'", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for f in report:
        print(f"== {f['function']}: {f['instructions']} instructions")
        for lp in f["loops"]:
            top = ", ".join(f"{k} {v}" for k, v in list(lp["opcodes"].items())[:8])
            print(f"  {lp['start']}..{lp['end']}  {lp['instructions']:5d}  {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
