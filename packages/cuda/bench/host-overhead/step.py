"""The host side of one MoE step driven from Python: step.c's calls through the Python package.

    python3 step.py masked:1 masked:128 contiguous:128 [--steps N] [--experts E]

Same world (one rank on GPU 0), same config, same inputs (the library's sy_fill_random with the
same seeds, the same routes) and the same measurements as step.c, through `switchyard_cuda` on
torch tensors and a torch stream:
  eager  N steps, each: the four phases then Endpoint.check (synchronises, reads the error word)
  graph  the four phases captured once with torch.cuda.graph; N replays, each: replay then check
Prints one JSON object (median, p10, p90 in microseconds).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

EXPERTS, TOP_K, HIDDEN, WARMUP = 256, 8, 7168, 50
PHASES = ("dispatch_send", "dispatch_recv", "combine_send", "combine_recv")


def summary(samples: list[float]) -> dict:
    v = sorted(samples)
    n = len(v)
    return {"median": round(v[n // 2], 3), "p10": round(v[n // 10], 3), "p90": round(v[(n * 9) // 10], 3)}


def bench_lib():
    """The bench library (sy_fill_random): SWITCHYARD_CUDA_BENCH_LIB, else beside SWITCHYARD_CUDA_LIB."""
    path = os.environ.get("SWITCHYARD_CUDA_BENCH_LIB")
    if not path:
        path = str(Path(os.environ["SWITCHYARD_CUDA_LIB"]).with_name("libswitchyard_cuda_bench.so.1"))
    return ctypes.CDLL(path)


def fill_random(lib, tensor, kind: int, seed: int, stream) -> None:
    """The bench library's deterministic fill (what step.c uses), so both drivers move the same bits."""
    fn = lib.sy_fill_random
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p]
    st = fn(tensor.data_ptr(), tensor.numel(), kind, seed, stream.cuda_stream)
    if st != 0:
        lib.sy_bench_last_error.restype = ctypes.c_char_p
        raise RuntimeError(f"sy_fill_random: {lib.sy_bench_last_error(None).decode()}")


def run_point(rt, stream, layout: str, tokens: int, steps: int, experts: int = EXPERTS) -> dict:
    import torch

    from switchyard_cuda import Config, Endpoint

    config = Config(ranks=1, experts=experts, top_k=TOP_K, hidden=HIDDEN, max_tokens_per_rank=tokens,
                    dispatch_dtype="fp8-e4m3", layout=layout, expert_alignment=128 if layout == "contiguous" else 1)
    ep = Endpoint(rt, config, timeout_ms=10_000)
    t = torch.arange(tokens, dtype=torch.int32).unsqueeze(1)
    k = torch.arange(TOP_K, dtype=torch.int32).unsqueeze(0)
    idx = ((37 * t + (experts // TOP_K) * k) % experts).to(torch.int32).cuda()
    w = torch.full((tokens, TOP_K), 1.0 / TOP_K, dtype=torch.float32, device="cuda")
    x = torch.empty((tokens, HIDDEN), dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    expert_out = torch.empty((ep.layout.rows, HIDDEN), dtype=torch.bfloat16, device="cuda")
    bench = bench_lib()
    fill_random(bench, x, 3, 1, stream)
    fill_random(bench, expert_out, 3, 2, stream)
    stream.synchronize()

    clock = time.perf_counter_ns
    samples = {name: [] for name in (*PHASES, "step")}
    for s in range(-WARMUP, steps):
        t0 = clock()
        ep.dispatch_send(x, idx, w)
        t1 = clock()
        ep.dispatch_recv()
        t2 = clock()
        ep.combine_send(expert_out)
        t3 = clock()
        ep.combine_recv(idx, out=y)
        t4 = clock()
        ep.check()
        t5 = clock()
        if s >= 0:
            for name, a, b in zip(PHASES, (t0, t1, t2, t3), (t1, t2, t3, t4)):
                samples[name].append((b - a) / 1e3)
            samples["step"].append((t5 - t0) / 1e3)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        ep.dispatch_send(x, idx, w)
        ep.dispatch_recv()
        ep.combine_send(expert_out)
        ep.combine_recv(idx, out=y)
    replays = []
    for s in range(-WARMUP, steps):
        t0 = clock()
        graph.replay()
        ep.check()
        if s >= 0:
            replays.append((clock() - t0) / 1e3)
    del graph
    ep.destroy()
    return {
        "layout": layout,
        "tokens": tokens,
        "steps": steps,
        "eager": {name: summary(v) for name, v in samples.items()},
        "graph": {"step": summary(replays)},
    }


def main(argv: list[str]) -> int:
    import torch

    from switchyard_cuda import Runtime

    steps, experts, points = 1000, EXPERTS, []
    args = iter(argv)
    for a in args:
        if a == "--steps":
            steps = int(next(args, "0"))
        elif a == "--experts":
            experts = int(next(args, "0"))
        elif a.split(":")[0] in ("masked", "contiguous") and a.split(":")[-1].isdigit() and int(a.split(":")[1]) >= 1:
            points.append((a.split(":")[0], int(a.split(":")[1])))
        else:
            print(f"usage: step.py (masked:<tokens> | contiguous:<tokens>)... [--steps N] [--experts E]; got {a}",
                  file=sys.stderr)
            return 2
    if not points or steps < 10 or experts < TOP_K or experts % TOP_K:
        print(f"usage: step.py (masked:<tokens> | contiguous:<tokens>)... [--steps N >= 10] [--experts E, a multiple of {TOP_K}]",
              file=sys.stderr)
        return 2
    torch.cuda.set_device(0)
    rt = Runtime(Runtime.get_unique_id(), 0, 1, 0)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        results = [run_point(rt, stream, layout, tokens, steps, experts) for layout, tokens in points]
    print(json.dumps({"driver": "python", "version": rt.lib.sy_version().decode(), "experts": experts, "torch": torch.__version__,
                      "python": sys.version.split()[0], "points": results}, indent=1))
    rt.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
