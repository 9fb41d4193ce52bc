"""The work a caller of DeepEP's normal kernels does around them, in plain torch as an engine without
fused kernels would: the received rows (one per source rank and token) into rows packed per local
expert for the grouped GEMM, and the expert outputs back into one weighted row per received token.
"""

import torch


def _gather_rows(t, index):
    """t[index] along dim 0, gathered as bytes (index_select lacks the fp8 dtypes in some torch builds)."""
    return t.view(torch.uint8).index_select(0, index).view(t.dtype)


def permute(recv, recv_idx, recv_w, counts):
    """Every (received token, local expert) entry as one row, grouped by local expert in ascending order,
    the received order kept within an expert.

    recv: the received rows, [N, H] bf16 or (rows [N, H] fp8, scales [N, H/128] fp32); recv_idx [N, K]
    local expert of each slot or -1; recv_w [N, K] fp32; counts: entries per local expert, a host list
    (so the entry count E = sum(counts) needs no device sync). Returns x [E, H], scales [E, H/128] (None
    for bf16 rows), experts [E] ascending, token [E] int64 (the entry's row of recv), weight [E] fp32.
    """
    x, scales = recv if isinstance(recv, tuple) else (recv, None)
    n = sum(counts)
    # Empty slots sort after every local expert: the stable sort's first E positions are the entries.
    key = torch.where(recv_idx >= 0, recv_idx, len(counts)).flatten()
    experts, order = torch.sort(key, stable=True)
    order = order[:n]
    token = torch.div(order, recv_idx.size(1), rounding_mode="floor")
    return {
        "x": _gather_rows(x, token),
        "scales": None if scales is None else scales.index_select(0, token),
        "experts": experts[:n],
        "token": token,
        "weight": recv_w.flatten().index_select(0, order),
    }


def reduce_tokens(expert_out, packed, received):
    """y [received, H] bf16: per received token, the sum over its entries of weight * expert output row in
    fp32, rounded to bf16 once. expert_out: [E, H] bf16 in permute's order; packed: permute's result."""
    y = torch.zeros((received, expert_out.size(1)), dtype=torch.float32, device=expert_out.device)
    # bf16 rows times fp32 weights promote to fp32: the products are fp32 before the sum.
    y.index_add_(0, packed["token"], expert_out * packed["weight"].unsqueeze(1))
    return y.to(torch.bfloat16)
