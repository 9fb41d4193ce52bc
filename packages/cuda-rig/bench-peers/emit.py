"""What the peer script tells the TypeScript bench: one JSON object a line on stdout, each line
starting with PREFIX so the libraries' own prints are told apart (src/bench/peerLines.ts parses them).

kinds: "start" {impl, version}, "skip" {impl, reason} (the whole peer), "point" {impl, layout, tokens,
mode, timing, notes, ranks: [{rank, samplesUs, deviceBytes, deviceUsedBytes, sms, errors}]},
"error" {impl, layout, tokens, error} (that point and the rest of this peer's run), "done" {impl}.
"""

import json
import sys

PREFIX = "SWITCHYARD-PEER "


def emit(kind, **fields):
    sys.stdout.write(PREFIX + json.dumps({"kind": kind, **fields}, separators=(",", ":")) + "\n")
    sys.stdout.flush()
