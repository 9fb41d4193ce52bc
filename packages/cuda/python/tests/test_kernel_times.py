"""bench/kernel-times/times.py on made-up ncu output (no GPU needed): medians per stage kernel, units,
and a refusal when a kernel was not profiled."""

import subprocess
import sys
from pathlib import Path

import pytest

TIMES = Path(__file__).resolve().parents[2] / "bench" / "kernel-times" / "times.py"
KERNELS = ("dispatchSendKernel", "dispatchRecvKernel", "combineSendKernel", "combineRecvKernel")


def _ncu_csv(values_us: dict, unit: str = "usecond") -> str:
    lines = ['==PROF== Connected to process 1', '{"driver": "c"}',
             '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
    i = 0
    for kernel, values in values_us.items():
        for v in values:
            shown = v * 1000 if unit == "nsecond" else v
            lines.append(f'"{i}","sy::(anonymous namespace)::{kernel}(sy::SyCtx)","gpu__time_duration.sum","{unit}","{shown:,.2f}"')
            i += 1
    return "\n".join(lines) + "\n"


# How ncu names today's kernels, per stage: one function a half (its launches alternating send,
# receive) or a kernel a stage (the stage calls).
HALVES = {"dispatchSend": "dispatch<false, true>", "dispatchRecv": "dispatch<false, true>", "combineSend": "combine<false>",
          "combineRecv": "combine<false>"}
STAGE_KERNELS = {"dispatchSend": "dispatch_send<false>", "dispatchRecv": "dispatch_recv<true>",
                 "combineSend": "combine_send<false>", "combineRecv": "combine_recv<false>"}
# The receive as builds before its two ways named it (untemplated).
EARLIER_RECV = {**STAGE_KERNELS, "dispatchRecv": "dispatch_recv"}


def _ncu_csv_named(values_us: dict, names: dict) -> str:
    lines = ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
    i = 0
    for n in range(len(values_us["dispatchSend"])):
        for stage, name in names.items():
            lines.append(f'"{i}","void sy::kernels::{name}(sy::SyCtx, int)","gpu__time_duration.sum","usecond",'
                         f'"{values_us[stage][n]:,.2f}"')
            i += 1
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("names", [HALVES, STAGE_KERNELS, EARLIER_RECV],
                         ids=["one kernel a half", "a kernel a stage", "an earlier build's receive"])
def test_todays_kernels_by_name_and_launch_order(tmp_path, names):
    times = {"dispatchSend": [10.0, 11.0, 12.0], "dispatchRecv": [5.0, 6.0, 7.0], "combineSend": [8.0, 9.0, 8.0],
             "combineRecv": [3.0, 4.0, 5.0]}
    csv = _ncu_csv_named(times, names)
    run = _run(tmp_path, csv, csv)
    assert run.returncode == 0, run.stderr
    assert "| dispatchSend | 11.00 | 11.00 | 3 / 3 |" in run.stdout
    assert "| dispatchRecv | 6.00 | 6.00 | 3 / 3 |" in run.stdout
    assert "| combineSend | 8.00 | 8.00 | 3 / 3 |" in run.stdout
    assert "| combineRecv | 4.00 | 4.00 | 3 / 3 |" in run.stdout


def _run(tmp_path, eager, graph):
    (tmp_path / "e.csv").write_text(eager)
    (tmp_path / "g.csv").write_text(graph)
    return subprocess.run([sys.executable, str(TIMES), "--point", "masked:1", "--eager", str(tmp_path / "e.csv"),
                           "--graph", str(tmp_path / "g.csv")], capture_output=True, text=True)


def test_medians_per_kernel_in_microseconds_whatever_the_unit(tmp_path):
    eager = _ncu_csv({k: [10.0, 12.0, 11.0] for k in KERNELS})
    graph = _ncu_csv({k: [2.0, 1.0, 3.0] for k in KERNELS}, unit="nsecond")  # written as 2,000.00 ns etc.
    run = _run(tmp_path, eager, graph)
    assert run.returncode == 0, run.stderr
    assert "| dispatchSend | 11.00 | 2000.00 |" not in run.stdout
    assert "| dispatchSend | 11.00 | 2.00 | 3 / 3 |" in run.stdout
    assert "| all four | 44.00 | 8.00 |" in run.stdout


def test_a_kernel_never_profiled_is_an_error(tmp_path):
    eager = _ncu_csv({k: [10.0] for k in KERNELS[:3]})
    run = _run(tmp_path, eager, eager)
    assert run.returncode == 1 and "no combineRecv kernels profiled" in run.stderr
