"""The handle of a low-latency dispatch as DeepEP lays it out, built from Switchyard's output.

Switchyard's masked output packs expert e's rows at the front of its [R*M] block, ordered by source
rank, then the source's token order: the row of (e, source s, i) is
    e*R*M + sum_{s' < s} counts[e][s'] + i
with counts [L, R] int32 (rows per local expert and source) and recvMeta [L, R*M, 4] int32
(srcRank, srcToken, topkSlot, localExpert) per row. From them:
    recv_count   [L]      int32   rows of each local expert: sum_s counts[e][s]
    layout_range [L, R]   int64   (begin << 32) | count per (expert, source): begin = sum_{s'<s} counts[e][s']
    src_info     [L, R*M] int32   the source token of each row (recvMeta[..., 1]; rows past the count unspecified)
UE8M0 scales go out packed four per int32 [L, R*M, ceil(S/4)] (S = hidden/128), row-major: byte i
of word w is the exponent byte (s + 127) of scale 4w + i, bytes past S zero.

The `*_reference` functions compute the same on plain lists (the rule, testable without torch);
`fill_*` compute it on torch tensors into buffers made once, so a step allocates nothing.
"""

from __future__ import annotations

LOW_BITS = 32  # layout_range: begin in the high 32 bits, count in the low 32


def layout_range_reference(counts: list) -> list:
    """[[begin << 32 | count for each source] for each local expert] of counts [L][R]."""
    out = []
    for row in counts:
        begin, packed = 0, []
        for count in row:
            packed.append((begin << LOW_BITS) | count)
            begin += count
        out.append(packed)
    return out


def recv_count_reference(counts: list) -> list:
    return [sum(row) for row in counts]


def src_info_reference(meta: list) -> list:
    """[[srcToken of each row] for each local expert] of recvMeta [L][R*M][4]."""
    return [[row[1] for row in block] for block in meta]


def ue8m0_words_reference(scales: list) -> list:
    """The packed words of one row's scales (each 2^s, s in [-126, 127]): ceil(S/4) int32 values."""
    words = [0] * (-(-len(scales) // 4))
    for j, scale in enumerate(scales):
        s = scale.hex()  # '0x1.0000000000000p-3'
        if not s.startswith("0x1.0000000000000p"):
            raise ValueError(f"ue8m0_words_reference: scale {j} = {scale} is not a power of two")
        byte = int(s.split("p")[1]) + 127
        words[j >> 2] |= byte << (8 * (j & 3))
    return [w - (1 << 32) if w >= 1 << 31 else w for w in words]


def fill_handle(counts, meta, recv_count, layout_range, src_info) -> None:
    """Writes recv_count [L] int32, layout_range [L, R] int64 and src_info [L, R*M] int32 from
    counts [L, R] int32 and meta [L, R*M, 4] int32, on the tensors' device and stream, in place."""
    import torch

    torch.sum(counts, dim=1, dtype=torch.int32, out=recv_count)
    # cumsum is the end of each source's rows; begin << 32 | count = end << 32 - count * (2^32 - 1)
    torch.cumsum(counts, dim=1, dtype=torch.int64, out=layout_range)
    layout_range.mul_(1 << LOW_BITS)
    layout_range.add_(counts, alpha=-((1 << LOW_BITS) - 1))
    src_info.copy_(meta[..., 1])


def fill_ue8m0(scales, shifted, packed_bytes) -> None:
    """Packs fp32 scales [L, R*M, S] (powers of two) into packed_bytes [L, R*M, 4*ceil(S/4)] uint8
    (zero past S, made so once), read as int32 through packed_bytes.view(torch.int32); `shifted`
    [L, R*M, S] int32 is scratch."""
    import torch

    torch.bitwise_right_shift(scales.view(torch.int32), 23, out=shifted)
    packed_bytes[..., : scales.shape[-1]].copy_(shifted)


class LowLatencyHandle(tuple):
    """(src_info, layout_range, num_max_dispatch_tokens_per_rank, hidden, num_experts) as DeepEP's
    handle, which unpacks the same; `state` and `step` say which config's dispatch it came from."""

    def __new__(cls, src_info, layout_range, max_tokens: int, hidden: int, experts: int, state=None, step: int = 0):
        handle = super().__new__(cls, (src_info, layout_range, max_tokens, hidden, experts))
        handle.state, handle.step = state, step
        return handle
