"""bench/kernel-times/hot.py on a made-up Nsight Compute source page (no GPU needed): the lines
with the most stall samples first, each with its leading reasons; a kernel's table listed twice
counts once."""

import subprocess
import sys
from pathlib import Path

HOT = Path(__file__).resolve().parents[2] / "bench" / "kernel-times" / "hot.py"

HEADER = '"# Address","Source","Warp Stall Sampling (All Samples)","stall_long_sb","stall_wait"\n'


def _run(tmp_path, text: str) -> subprocess.CompletedProcess:
    page = tmp_path / "sass.csv"
    page.write_text(text)
    return subprocess.run([sys.executable, str(HOT), str(page)], capture_output=True, text=True, check=False)


def test_hottest_first_with_reasons(tmp_path):
    table = HEADER + '"0x10","FADD R1","1","0","1"\n"0x20","LDG R0","3","3","0"\n'
    out = _run(tmp_path, table)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "== 2 SASS lines, 4 stall samples"
    assert "0x20" in lines[1] and "75.0%" in lines[1] and "stall_long_sb 3" in lines[1]
    assert "0x10" in lines[2] and "25.0%" in lines[2] and "stall_wait 1" in lines[2]


def test_a_table_listed_twice_counts_once(tmp_path):
    table = HEADER + '"0x10","LDG R0","2","2","0"\n'
    out = _run(tmp_path, table + table)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("== 1 SASS lines") == 1


def test_no_table_is_an_error(tmp_path):
    out = _run(tmp_path, "nothing here\n")
    assert out.returncode == 1
    assert "no source table" in out.stderr
