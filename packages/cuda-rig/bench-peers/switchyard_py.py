"""This library through its Python package (switchyard_cuda's Endpoint, the four phases as an engine
calls them), timed by the same harness as the peers (timing.py) on the masked points.

The bench's own rows time one CUDA graph per step with events recorded inside it; the peers' rows
time one graph per call with events between the graphs. The two methods need not cost the same, so
this row measures this library the peers' way, and its gap to deepep-ll and pplx is like for like.

Shapes (switchyard_cuda.Endpoint): x [T, H] bf16 (or fp8 with its scales [T, H / 128]), topk_idx [T, K] int32, topk_weights [T, K] fp32
(weights at the expert ranks); received rows [L, R * T, H] per local expert with counts [L, R];
combine takes the expert outputs as [L * R * T, H] bf16 and returns y [T, H].
"""

import torch

from manifest import expected_counts
from tensors import cast_fp8, counts_mismatch, random_bf16, routing, seed_of
from timing import describe, graphs_or_eager, time_steps

IMPL = "switchyard-py"
LAYOUT = "masked"


def probe():
    import switchyard_cuda

    switchyard_cuda.library_path()  # the library must load here, not only the package import
    return switchyard_cuda.__version__


def config_of(sy, m, tokens):
    """The bench's masked config at this point (src/bench/plan.ts: maxTokensPerRank = tokens)."""
    return sy.Config(
        ranks=m["ranks"],
        experts=m["experts"],
        top_k=m["topK"],
        hidden=m["hidden"],
        max_tokens_per_rank=tokens,
        input_dtype=m["inputDtype"],
        dispatch_dtype=m["dispatchDtype"],
        layout="masked",
    )


class Session:
    def __init__(self, m, points, group):
        import switchyard_cuda as sy

        self.sy = sy
        self.m = m
        self.rank = torch.distributed.get_rank()
        self.configs = {p["tokens"]: config_of(sy, m, p["tokens"]) for p in points}
        heap = max(sy.compute_layout(c).symmetric_bytes for c in self.configs.values())
        self.runtime = sy.Runtime.from_torch_distributed(group, symmetric_bytes=heap)

    def point(self, p):
        config = self.configs[p["tokens"]]
        ep = self.sy.Endpoint(self.runtime, config, timeout_ms=20_000)
        try:
            return self._measure(ep, config, p)
        finally:
            torch.cuda.synchronize()
            ep.destroy()

    def _measure(self, ep, config, p):
        m = self.m
        t, h = p["tokens"], m["hidden"]
        rows = config.local_experts * config.ranks * t
        expert_y = random_bf16((rows, h), seed_of(m, 0, self.rank, 7))
        y = torch.empty((t, h), dtype=torch.bfloat16, device="cuda")
        states = []
        for s in range(m["rotate"]):
            idx, w = routing(m, p, s, self.rank, torch.int32)
            x = random_bf16((t, h), seed_of(m, s, self.rank, 1))
            x, scales = cast_fp8(x) if m["inputDtype"] == "fp8-e4m3" else (x, None)
            states.append({"x": x, "scales": scales, "idx": idx, "w": w})

        def calls(st):
            def dispatch_recv():
                st["out"] = ep.dispatch_recv()

            return [
                lambda: ep.dispatch_send(st["x"], st["idx"], st["w"], st["scales"]),
                dispatch_recv,
                lambda: ep.combine_send(expert_y),
                lambda: ep.combine_recv(st["idx"], out=y),
            ]

        eager = [calls(st) for st in states]
        for c in eager[0]:  # one eager step before any capture
            c()
        ep.check()
        notes = []
        mode, run = graphs_or_eager(m, eager, notes, lambda: None)
        samples = time_steps(run, m["warmup"], m["steps"])
        ep.check()  # what a stage recorded (a timeout, a bad signal) fails the point, naming it
        last = (m["warmup"] + m["steps"] - 1) % m["rotate"]
        counts = states[last]["out"].counts.sum(dim=1).tolist()
        errors = []
        bad = counts_mismatch("counts", counts, expected_counts(m, p, last, self.rank))
        if bad:
            errors.append(f"rank {self.rank}: {bad}")
        return {
            "mode": mode,
            "timing": describe(mode, "the four phases as four calls", m["steps"]),
            "notes": notes,
            "samplesUs": samples,
            "deviceBytes": ep.memory()["device_bytes"],
            "sms": torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count,
            "errors": errors,
        }

    def close(self):
        torch.cuda.synchronize()
        torch.distributed.barrier()
        self.runtime.destroy()
