"""The host-overhead report (bench/host-overhead/report.py): what it computes and when it says MISS,
on made-up driver output (no GPU needed)."""

import json
import subprocess
import sys
from pathlib import Path

REPORT = Path(__file__).resolve().parents[2] / "bench" / "host-overhead" / "report.py"
PHASES = ("dispatch_send", "dispatch_recv", "combine_send", "combine_recv")


def _driver(name: str, call_us: float, eager_us: float, graph_us: float, tokens: int = 1) -> dict:
    def s(v):
        return {"median": v, "p10": v, "p90": v}

    return {"driver": name, "version": "test", "torch": "t", "python": "p", "points": [{
        "layout": "masked", "tokens": tokens, "steps": 100,
        "eager": {**{p: s(call_us) for p in PHASES}, "step": s(eager_us)},
        "graph": {"step": s(graph_us)},
    }]}


def _run(tmp_path: Path, cs: list, pys: list):
    paths = {"c": [], "python": []}
    for kind, runs in (("c", cs), ("python", pys)):
        for i, r in enumerate(runs):
            p = tmp_path / f"{kind}-{i}.json"
            p.write_text(json.dumps(r))
            paths[kind].append(str(p))
    out = tmp_path / "out.json"
    run = subprocess.run([sys.executable, str(REPORT), "--c", *paths["c"], "--python", *paths["python"],
                          "--json", str(out)], capture_output=True, text=True)
    return run, json.loads(out.read_text())


def test_added_time_is_the_step_difference_spread_over_the_four_phases(tmp_path):
    run, out = _run(tmp_path, [_driver("c", 2.0, 40.0, 30.0)], [_driver("python", 5.5, 52.0, 34.0)])
    assert run.returncode == 0, run.stdout + run.stderr
    eager, graph = out["verdicts"]
    assert (eager["mode"], eager["addedPerPhaseUs"], eager["met"]) == ("eager", 3.0, True)
    assert (graph["mode"], graph["addedPerPhaseUs"], graph["met"]) == ("graph", 1.0, True)
    assert [c["addedUs"] for c in out["calls"]] == [3.5] * 4
    assert out["met"] is True and "MET" in run.stdout


def test_more_than_the_limit_per_phase_is_a_miss_and_fails(tmp_path):
    run, out = _run(tmp_path, [_driver("c", 2.0, 40.0, 30.0)], [_driver("python", 9.0, 64.4, 31.0)])
    assert run.returncode == 1
    assert out["met"] is False and out["verdicts"][0]["met"] is False and out["verdicts"][1]["met"] is True
    assert "MISS" in run.stdout


def test_the_verdict_is_the_median_over_rounds(tmp_path):
    # Eager adds 1, 12 and 2 us per phase in three rounds: the median (2) is met, one slow round is not a miss.
    c = [_driver("c", 2.0, 40.0, 30.0)] * 3
    py = [_driver("python", 3.0, e, 30.0) for e in (44.0, 88.0, 48.0)]
    run, out = _run(tmp_path, c, py)
    assert run.returncode == 0, run.stdout
    assert [r["addedPerPhaseUs"] for r in out["rounds"] if r["mode"] == "eager"] == [1.0, 12.0, 2.0]
    assert out["verdicts"][0]["addedPerPhaseUs"] == 2.0 and out["verdicts"][0]["pythonUs"] == 48.0


def test_runs_of_different_points_are_refused(tmp_path):
    run = subprocess.run([sys.executable, str(REPORT), "--c", "a.json", "b.json", "--python", "c.json"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and "one of each per round" in run.stderr
    c, py = _driver("c", 1, 1, 1, tokens=1), _driver("python", 1, 1, 1, tokens=128)
    (tmp_path / "c.json").write_text(json.dumps(c))
    (tmp_path / "py.json").write_text(json.dumps(py))
    run = subprocess.run([sys.executable, str(REPORT), "--c", "c.json", "--python", "py.json"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode != 0 and "points differ" in run.stderr
