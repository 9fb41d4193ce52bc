"""Runtime.info() and Endpoint.check() decode what the library writes, without a GPU: a fake
library whose functions are C-callable and write the C struct's bytes (sy_runtime_info: seven ints)
at the pointer they get, and the guard after the buffer that catches a write past the mirror."""

import ctypes
import struct

import pytest

from switchyard_cuda import InternalError, Runtime, _abi

FIELDS = ("rank", "ranks", "device", "node_ranks", "sm_count", "direct_peers", "gpu_share")
C_INFO = struct.Struct("=7i")  # sy_runtime_info as the C compiler lays it out (7 x int, no padding)


class FakeLibrary:
    """The few functions Runtime calls, declared as the real library's are (_abi's table)."""

    def __init__(self, info_bytes: bytes):
        self.pointers = []

        def info_get(handle, out):
            self.pointers.append(out)
            ctypes.memmove(out, info_bytes, len(info_bytes))
            return 0

        # A C function pointer (the callback sees the address as an int), declared as _abi declares the real one.
        self.sy_runtime_info_get = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(info_get)
        restype, argtypes = _abi.CUDA_FUNCTIONS["sy_runtime_info_get"]
        self.sy_runtime_info_get.restype, self.sy_runtime_info_get.argtypes = restype, argtypes

    def sy_runtime_options_init(self, options):
        return None

    def sy_runtime_create_with_options(self, uid, rank, ranks, device, options, out):
        return 0

    def sy_last_error(self, handle):
        return b""


@pytest.fixture(autouse=True)
def _keep_env(monkeypatch):
    # Runtime() sets NVSHMEM_DISABLE_NVLS / NCCL_NVLS_ENABLE: restored after each test.
    monkeypatch.setenv("NVSHMEM_DISABLE_NVLS", "1")
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")


def runtime_over(info_bytes: bytes):
    lib = FakeLibrary(info_bytes)
    return Runtime(bytes(_abi.SY_UNIQUE_ID_BYTES), 0, 1, 0, lib=lib), lib


def test_every_field_of_sy_runtime_info_lands_gpu_share_included():
    values = (3, 8, 1, 4, 132, 6, 2)
    rt, lib = runtime_over(C_INFO.pack(*values))
    assert ctypes.sizeof(_abi.SyRuntimeInfo) == C_INFO.size
    assert rt.info() == dict(zip(FIELDS, values))
    assert len(lib.pointers) == 1 and lib.pointers[0]


def test_a_library_writing_past_the_mirror_is_refused_not_absorbed():
    # A C struct one int larger than the mirror (a field added on one side only).
    rt, _ = runtime_over(struct.pack("=8i", *range(1, 9)))
    with pytest.raises(InternalError, match=r"at least 32 bytes into a 28-byte SyRuntimeInfo"):
        rt.info()


def test_the_guard_reports_the_furthest_byte_written():
    size = ctypes.sizeof(_abi.SyErrorInfo)

    def fill(p):
        base = ctypes.cast(p, ctypes.c_void_p).value
        ctypes.memset(base, 0, size)
        ctypes.memset(base + size + 9, 0x11, 1)  # one stray byte, 10 past the end
        return 0

    with pytest.raises(InternalError, match=rf"at least {size + 10} bytes into a {size}-byte SyErrorInfo"):
        _abi.filled(_abi.SyErrorInfo, "sy_endpoint_check", fill)


def test_filled_returns_the_status_and_a_copy():
    def fill(p):
        p.contents.code, p.contents.detail1 = 7, 0x00030005
        return 1

    status, info = _abi.filled(_abi.SyErrorInfo, "sy_endpoint_check", fill)
    assert status == 1 and (info.code, info.stage, info.detail1) == (7, 0, 0x00030005)


class OptionsLibrary(FakeLibrary):
    """Keeps the runtime options Runtime passed to sy_runtime_create_with_options."""

    def __init__(self):
        super().__init__(b"")
        self.options = None

    def sy_runtime_options_init(self, options):
        ctypes.memset(options, 0, ctypes.sizeof(_abi.SyRuntimeOptions))

    def sy_runtime_create_with_options(self, uid, rank, ranks, device, options, out):
        self.options = _abi.SyRuntimeOptions.from_buffer_copy(options._obj)
        return 0


@pytest.mark.parametrize("asked, passed", [(None, 0), (False, 0), (True, 1)])
def test_kernel_per_half_reaches_the_runtime_options(asked, passed):
    lib = OptionsLibrary()
    kwargs = {} if asked is None else {"kernel_per_half": asked}
    Runtime(bytes(_abi.SY_UNIQUE_ID_BYTES), 0, 1, 0, lib=lib, **kwargs)
    assert lib.options.kernel_per_half == passed
