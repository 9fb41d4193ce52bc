"""One process's NVSHMEM runtime on one GPU, bootstrapped by unique id (by hand, or over torch.distributed)."""

from __future__ import annotations

import ctypes
import os

from . import _abi
from .errors import error_for

TRANSPORTS = {"auto": 0, "put": 1}


def heap_size_for(symmetric_bytes: int) -> int:
    """NVSHMEM symmetric heap for endpoints of this many symmetric bytes: twice that plus 512 MiB,
    in 256 MiB steps, at least 2 GiB (what the Node workers use)."""
    want = 2 * symmetric_bytes + 512 * 2**20
    step = 256 * 2**20
    return max(2 * 2**30, -(-want // step) * step)


def keep_nvls_off() -> None:
    """NVLink multicast stays off in every process that starts NVSHMEM or NCCL here."""
    os.environ["NVSHMEM_DISABLE_NVLS"] = "1"
    os.environ["NCCL_NVLS_ENABLE"] = "0"


class Runtime:
    """NVSHMEM on one GPU. Creating and destroying it are collective (every rank, same order)."""

    def __init__(
        self,
        unique_id: bytes,
        rank: int,
        ranks: int,
        device: int,
        *,
        transport: str = "auto",
        pointer_checks: bool = True,
        contiguous_blocks: int = 0,
        kernel_per_half: bool = False,
        lib: ctypes.CDLL | None = None,
    ):
        if transport not in TRANSPORTS:
            raise ValueError(f"Runtime: transport {transport!r} must be one of {', '.join(TRANSPORTS)}")
        if len(unique_id) != _abi.SY_UNIQUE_ID_BYTES:
            raise ValueError(f"Runtime: unique_id must be {_abi.SY_UNIQUE_ID_BYTES} bytes (Runtime.get_unique_id on rank 0)")
        self.lib = lib or _abi.load("cuda")
        self.rank, self.ranks, self.device = rank, ranks, device
        keep_nvls_off()
        opts = _abi.SyRuntimeOptions()
        self.lib.sy_runtime_options_init(ctypes.byref(opts))
        opts.transport = TRANSPORTS[transport]
        opts.pointer_checks = 1 if pointer_checks else 0
        opts.contiguous_blocks = contiguous_blocks
        opts.kernel_per_half = 1 if kernel_per_half else 0
        handle = ctypes.c_void_p()
        st = self.lib.sy_runtime_create_with_options(unique_id, rank, ranks, device, ctypes.byref(opts), ctypes.byref(handle))
        if st != 0:
            raise error_for(st, "sy_runtime_create", self._message(None), rank=rank)
        self._handle = handle

    @staticmethod
    def get_unique_id(lib: ctypes.CDLL | None = None) -> bytes:
        """A new NVSHMEM unique id (rank 0 makes it, every rank passes it to Runtime)."""
        lib = lib or _abi.load("cuda")
        buf = ctypes.create_string_buffer(_abi.SY_UNIQUE_ID_BYTES)
        st = lib.sy_get_unique_id(buf)
        if st != 0:
            raise error_for(st, "sy_get_unique_id", lib.sy_last_error(None).decode())
        return buf.raw

    @classmethod
    def from_torch_distributed(cls, group=None, *, device: int | None = None, symmetric_bytes: int = 0, **options):
        """Collective over `group` (default the world): rank 0 of the group makes the unique id and
        broadcasts it over the process group (no extra port). Call after torch.distributed is
        initialised (torchrun) and torch.cuda.set_device. `symmetric_bytes`: the most any endpoint of
        this runtime needs (Layout.symmetric_bytes); it sizes NVSHMEM's heap unless
        NVSHMEM_SYMMETRIC_SIZE is already set."""
        import torch
        import torch.distributed as dist

        rank, ranks = dist.get_rank(group), dist.get_world_size(group)
        device = torch.cuda.current_device() if device is None else device
        torch.cuda.set_device(device)
        lib = options.pop("lib", None) or _abi.load("cuda")
        if symmetric_bytes and "NVSHMEM_SYMMETRIC_SIZE" not in os.environ:
            os.environ["NVSHMEM_SYMMETRIC_SIZE"] = str(heap_size_for(symmetric_bytes))
        box = [cls.get_unique_id(lib) if rank == 0 else None]
        src = dist.get_global_rank(group, 0) if group is not None else 0
        dist.broadcast_object_list(box, src=src, group=group)
        return cls(box[0], rank, ranks, device, lib=lib, **options)

    def handle(self) -> ctypes.c_void_p:
        if self._handle is None:
            raise error_for(7, "Runtime", "the runtime was destroyed", rank=self.rank)
        return self._handle

    def _message(self, handle) -> str:
        return self.lib.sy_last_error(handle).decode()

    def check(self, status: int, call: str) -> None:
        if status != 0:
            raise error_for(status, call, self._message(self._handle), rank=self.rank)

    def info(self) -> dict:
        """rank, ranks, device, node_ranks, sm_count, direct_peers, gpu_share (sy_runtime_info)."""
        handle = self.handle()
        fill = self.lib.sy_runtime_info_get
        st, out = _abi.filled(_abi.SyRuntimeInfo, "sy_runtime_info_get", lambda p: fill(handle, p))
        self.check(st, "sy_runtime_info_get")
        return {name: getattr(out, name) for name, _ in out._fields_}

    def barrier(self, stream=None) -> None:
        from ._tensor import stream_handle_on

        self.check(self.lib.sy_barrier(self.handle(), stream_handle_on(self.device)(stream)), "sy_barrier")

    def destroy(self) -> None:
        """Finalises NVSHMEM (collective); destroy every endpoint first."""
        if self._handle is None:
            return
        self.check(self.lib.sy_runtime_destroy(self._handle), "sy_runtime_destroy")
        self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
