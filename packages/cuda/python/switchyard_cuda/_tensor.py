"""Torch tensors over device memory the library owns (its regions), without copying."""

from __future__ import annotations

# region / tensor dtype -> (CUDA array interface typestr, torch dtype to view the raw elements as)
_TYPES = {
    "bf16": ("<i2", "bfloat16"),
    "fp8-e4m3": ("|u1", "float8_e4m3fn"),
    "f32": ("<f4", None),
    "i32": ("<i4", None),
    "u32": ("<i4", None),  # torch's uint32 lacks most ops: read the bits as int32
}


class _DeviceArray:
    """An object exposing __cuda_array_interface__ (v3); keeps its owner (the endpoint) alive."""

    def __init__(self, ptr: int, shape: tuple, typestr: str, owner: object):
        self.__cuda_array_interface__ = {
            "shape": tuple(int(s) for s in shape),
            "typestr": typestr,
            "data": (int(ptr or 0), False),
            "version": 3,
            "strides": None,
        }
        self._owner = owner


def device_tensor(ptr: int, shape: tuple, dtype: str, device: int, owner: object):
    import torch

    typestr, view = _TYPES[dtype]
    t = torch.as_tensor(_DeviceArray(ptr, shape, typestr, owner), device=f"cuda:{device}")
    return t.view(getattr(torch, view)) if view else t


def stream_handle_on(device: int):
    """A function of `stream` (a torch.cuda.Stream, a raw handle or None) giving its cudaStream_t;
    None is torch's current stream on `device`. Made once per endpoint: it runs on every phase, so
    it reads the current stream through torch's raw accessor where torch has one (a Stream object
    costs microseconds to make)."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def handle(stream=None) -> int:
        if stream is None:
            return raw(device) if raw is not None else int(torch.cuda.current_stream(device).cuda_stream)
        return int(stream.cuda_stream) if hasattr(stream, "cuda_stream") else int(stream)

    return handle
