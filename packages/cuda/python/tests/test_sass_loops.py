"""bench/kernel-times/sass_loops.py on a made-up cuobjdump listing (no GPU needed): a loop is a
backward branch over at least --min instructions; only the innermost ones holding --with are
listed, counted by opcode; a name that matches nothing is an error."""

import json
import subprocess
import sys
from pathlib import Path

LOOPS = Path(__file__).resolve().parents[2] / "bench" / "kernel-times" / "sass_loops.py"


def _listing(name: str, body: list[str]) -> str:
    lines = [f"\t\tFunction : {name}"]
    for i, text in enumerate(body):
        lines.append(f"        /*{i * 16:04x}*/                   {text} ;      /* 0x000000000000 */")
        lines.append("                                                              /* 0x000000000000 */")
    return "\n".join(lines) + "\n"


# An outer loop (0x00..0x70) around a stage loop (0x10..0x50) with FMUL and a store loop
# (0x50..0x60) without; the back edges are the BRAs at 0x50, 0x60 and 0x70.
BODY = [
    "IADD3 R1, R1, 0x1, RZ",  # 0x00
    "LDS.128 R4, [R2]",  # 0x10
    "FMUL R5, R5, R6",  # 0x20
    "FADD R7, R7, R5",  # 0x30
    "@!P0 LDGSTS.E.BYPASS.128 [R3], desc[UR4][R8.64]",  # 0x40
    "@P1 BRA 0x10",  # 0x50
    "@P2 BRA 0x50",  # 0x60
    "@P3 BRA 0x0",  # 0x70
    "EXIT",  # 0x80
]


def _run(tmp_path, text: str, *args: str) -> subprocess.CompletedProcess:
    listing = tmp_path / "sass.txt"
    listing.write_text(text)
    return subprocess.run(
        [sys.executable, str(LOOPS), str(listing), *args], capture_output=True, text=True, check=False
    )


def test_the_innermost_loop_holding_the_opcode(tmp_path):
    args = ("--function", "kernel", "--with", "FMUL", "--min", "2", "--json")
    out = _run(tmp_path, _listing("_Z7kernelv", BODY), *args)
    assert out.returncode == 0, out.stderr
    (f,) = json.loads(out.stdout)
    assert f["instructions"] == len(BODY)
    assert [(lp["start"], lp["end"], lp["instructions"]) for lp in f["loops"]] == [("0x10", "0x50", 5)]
    assert f["loops"][0]["opcodes"] == {"BRA": 1, "FADD": 1, "FMUL": 1, "LDGSTS": 1, "LDS": 1}


def test_without_an_opcode_every_innermost_loop(tmp_path):
    out = _run(tmp_path, _listing("_Z7kernelv", BODY), "--function", "kernel", "--min", "2", "--json")
    assert out.returncode == 0, out.stderr
    (f,) = json.loads(out.stdout)
    assert [(lp["start"], lp["end"]) for lp in f["loops"]] == [("0x10", "0x50"), ("0x50", "0x60")]


def test_short_loops_are_left_out(tmp_path):
    out = _run(tmp_path, _listing("_Z7kernelv", BODY), "--function", "kernel", "--min", "6", "--json")
    (f,) = json.loads(out.stdout)
    assert [(lp["start"], lp["end"]) for lp in f["loops"]] == [("0x0", "0x70")]


def test_a_loop_with_two_back_edges_is_one_loop(tmp_path):
    # 0x10..0x40 with a `continue` (the BRA at 0x20 back to 0x10) and its last back edge at 0x40.
    body = ["IADD3 R1, R1, 0x1, RZ", "FMUL R2, R2, R3", "@P0 BRA 0x10", "FADD R4, R4, R2", "@P1 BRA 0x10", "EXIT"]
    out = _run(tmp_path, _listing("_Z7kernelv", body), "--function", "kernel", "--min", "2", "--json")
    (f,) = json.loads(out.stdout)
    assert [(lp["start"], lp["end"], lp["instructions"]) for lp in f["loops"]] == [("0x10", "0x40", 4)]


def test_no_such_function_is_an_error(tmp_path):
    out = _run(tmp_path, _listing("_Z7kernelv", BODY), "--function", "combine_send")
    assert out.returncode == 1
    assert "no function" in out.stderr
