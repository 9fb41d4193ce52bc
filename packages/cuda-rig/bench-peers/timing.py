"""How every peer is timed, the same way for each: per step, a GPU sleep (so the host queues the
whole step before the GPU reaches it: the times are the GPU's, not Python's launch overhead), an
NCCL all-reduce of one number (a device barrier: both GPUs leave it together), then the step's
calls with a CUDA event before the first and after each. Per phase, per measured step, microseconds.
"""

import torch
import torch.distributed as dist

# About 1 ms of GPU sleep at H100 clocks: longer than the host takes to queue one step.
QUEUE_AHEAD_CYCLES = 2_000_000

# Event indices around the calls: 4 calls (send / recv halves) or 2 (dispatch, combine).
SPANS = {
    4: [
        ("dispatchSend", 0, 1),
        ("dispatchRecv", 1, 2),
        ("dispatch", 0, 2),
        ("combineSend", 2, 3),
        ("combineRecv", 3, 4),
        ("combine", 2, 4),
        ("step", 0, 4),
    ],
    2: [("dispatch", 0, 1), ("combine", 1, 2), ("step", 0, 2)],
}


def capture(calls_by_set, pool):
    """One CUDA graph per call per input set (the same order as eager); returns their replays."""
    out = []
    for calls in calls_by_set:
        replays = []
        for call in calls:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                call()
            replays.append(g.replay)
        out.append(replays)
    torch.cuda.synchronize()
    return out


def time_steps(calls_by_set, warmup, steps):
    """Runs warmup + steps steps cycling through the input sets; returns {phase: [us per step]}."""
    n = len(calls_by_set[0])
    spans = SPANS[n]
    events = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    stream = torch.cuda.current_stream()
    samples = {name: [] for name, _, _ in spans}
    for i in range(warmup + steps):
        calls = calls_by_set[i % len(calls_by_set)]
        torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
        dist.all_reduce(flag)
        events[0].record(stream)
        for j, call in enumerate(calls):
            call()
            events[j + 1].record(stream)
        stream.synchronize()
        if i >= warmup:
            for name, a, b in spans:
                samples[name].append(events[a].elapsed_time(events[b]) * 1000.0)
    return samples


def describe(mode, split, steps):
    """The timing method of a row, as the report states it."""
    how = (
        "CUDA-graph replay of each call (one graph per call and input set)"
        if mode == "graph"
        else "each call launched eagerly"
    )
    return (
        f"{how}, {split}; CUDA events between the calls; per step a GPU sleep queues the host ahead, then an "
        f"NCCL all-reduce as device barrier; per phase the slowest rank of each step, median over {steps} steps"
    )


def graphs_or_eager(m, calls_by_set, notes, reset):
    """Graph replays when the bench runs graphs and capture works; else the eager calls (noted)."""
    if not m["graphs"]:
        return "eager", calls_by_set
    try:
        return "graph", capture(calls_by_set, torch.cuda.graph_pool_handle())
    except Exception as e:  # capture refused: measure eagerly, say why
        torch.cuda.synchronize()
        reset()
        notes.append(f"graph capture failed ({type(e).__name__}: {e}); timed eagerly")
        return "eager", calls_by_set
