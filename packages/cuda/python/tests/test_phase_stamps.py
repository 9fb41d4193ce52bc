"""bench/kernel-times/phases.py on made-up stamp output (no GPU needed): whole records are read
even where two ranks' lines were cut into each other, and broken ones are skipped."""

import importlib.util
import subprocess
import sys
from pathlib import Path

PHASES = Path(__file__).resolve().parents[2] / "bench" / "kernel-times" / "phases.py"


def _load():
    spec = importlib.util.spec_from_file_location("phases", PHASES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _line(kernel: str, ns: int, marks: list[int]) -> str:
    padded = marks + [0] * (8 - len(marks))
    return f"syclock {kernel} 7 {ns} {len(marks)} " + " ".join(str(m) for m in padded) + "\n"


def test_whole_lines_give_each_stamp():
    text = _line("dispatchSend", 1000, [100, 300, 2000]) + _line("combineRecv", 500, [50, 1000])
    got = list(_load().stamps(text))
    assert got == [("dispatchSend", 1000.0, [100.0, 300.0, 2000.0]), ("combineRecv", 500.0, [50.0, 1000.0])]


def test_lines_cut_into_each_other_keep_the_whole_records_only():
    a = _line("dispatchSend", 1000, [100, 300, 2000])
    b = _line("dispatchRecv", 800, [400, 1600])
    # rank 1's line starts inside rank 0's first line, which goes on after it (as seen at 2 GPUs)
    text = a[:24] + b + a[24:] + a + "syclock dispatchSend 7 12x 3 1 2 3 0 0 0 0 0\n"
    got = list(_load().stamps(text))
    assert ("dispatchRecv", 800.0, [400.0, 1600.0]) in got
    assert got.count(("dispatchSend", 1000.0, [100.0, 300.0, 2000.0])) == 1  # the cut one and the bad one skipped
    assert len(got) == 2


def test_implausible_records_are_skipped():
    bad = [
        "syclock k 7 1000 0 0 0 0 0 0 0 0 0\n",  # no marks
        "syclock k 7 1000 9 1 2 3 4 5 6 7 8\n",  # n past 8
        "syclock k 7 1000 2 300 100 0 0 0 0 0 0\n",  # marks falling
        "syclock k 7 1000 2 100 300 5 0 0 0 0 0\n",  # a mark past n
        "syclock k 7 -5 2 100 300 0 0 0 0 0 0\n",  # no time
    ]
    assert list(_load().stamps("".join(bad))) == []


def test_the_table_from_a_file():
    lines = "".join(_line("contigSend", 2000, [200, 4000]) for _ in range(60))
    out = subprocess.run([sys.executable, str(PHASES), "--steps", "0", "-"], input=lines, capture_output=True,
                         text=True, check=True).stdout
    assert "| contigSend | all | whole kernel (first to last stamp) | 2000 |" in out
    assert "| contigSend | all | plan: setup, tokens before the chunk | 100 |" in out  # cycles turned into ns: 200 of 4000 in 2000 ns
