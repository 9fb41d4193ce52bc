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
    assert got == [
        ("dispatchSend", 1000.0, [100.0, 300.0, 2000.0], None, None),
        ("combineRecv", 500.0, [50.0, 1000.0], None, None),
    ]


def test_lines_cut_into_each_other_keep_the_whole_records_only():
    a = _line("dispatchSend", 1000, [100, 300, 2000])
    b = _line("dispatchRecv", 800, [400, 1600])
    # rank 1's line starts inside rank 0's first line, which goes on after it (as seen at 2 GPUs)
    text = a[:24] + b + a[24:] + a + "syclock dispatchSend 7 12x 3 1 2 3 0 0 0 0 0\n"
    got = list(_load().stamps(text))
    assert ("dispatchRecv", 800.0, [400.0, 1600.0], None, None) in got
    assert got.count(("dispatchSend", 1000.0, [100.0, 300.0, 2000.0], None, None)) == 1  # the cut one and the bad one skipped
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
    assert "| contigSend | all | plan: the chunk counted, every block's counts in, totals out | 100 |" in out  # cycles turned into ns: 200 of 4000 in 2000 ns


def _timed(kernel: str, ns: int, marks: list[int], start: int, prev: int) -> str:
    return _line(kernel, ns, marks)[:-1] + f" {start} {prev}\n"


def test_the_gap_before_a_kernel_and_its_time_after_block_0():
    # send: block 0 from 10,000 to 11,000 ns, its last block ends at 11,400; recv starts at 14,400
    text = _timed("dispatchSend", 1000, [100, 2000], 10_000, 7_000) + _timed("dispatchRecv", 500, [50, 1000], 14_400, 11_400)
    mod = _load()
    lines = list(mod.stamps(text))
    assert lines[0][3:] == (10_000.0, 7_000.0)
    assert mod.surroundings(lines) == [(3000.0, 400.0), (3000.0, None)]
    # a cut line's tail is not read as the newer fields
    cut = _line("dispatchSend", 1000, [100, 2000])
    mixed = cut[:24] + _line("dispatchRecv", 800, [400, 1600]) + cut[24:]
    assert [r[3:] for r in mod.stamps(mixed)] == [(None, None)]


def test_the_table_gives_the_surroundings():
    lines = "".join(
        _timed("dispatchSend", 1000, [100, 2000], 100_000 * i + 3_000, 100_000 * i)
        + _timed("dispatchRecv", 500, [50, 1000], 100_000 * i + 6_000, 100_000 * i + 4_200)
        for i in range(60)
    )
    out = subprocess.run([sys.executable, str(PHASES), "--steps", "0", "-"], input=lines, capture_output=True,
                         text=True, check=True).stdout
    assert "| dispatchSend | all | gap before (the kernel before it ended to the printing block's start) | 3000 |" in out
    assert "| dispatchSend | all | after the printing block (to the kernel's last block end) | 200 |" in out
    assert "| dispatchRecv | all | gap before (the kernel before it ended to the printing block's start) | 1800 |" in out
