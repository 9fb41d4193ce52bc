"""Configs and their layout, computed by the library's C function (sy_layout_compute), which a
property test keeps byte for byte equal to core's computeLayout / layoutParams."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import NamedTuple

from . import _abi
from ._contract import DTYPES, LAYOUTS, REGION_DTYPES  # sy_dtype, sy_layout_kind, sy_region_dtype
from .errors import ConfigError

SCALE_FORMATS = ("pow2", "amax", "ue8m0")  # core's SCALE_FORMATS
COMBINE_WEIGHTS = ("expert", "home")  # core's combineWeights modes

# Python name -> core's field name (messages and ConfigError.field use core's)
FIELDS = {
    "ranks": "ranks",
    "dp_size": "dpSize",
    "experts": "experts",
    "top_k": "topK",
    "hidden": "hidden",
    "max_tokens_per_rank": "maxTokensPerRank",
    "expert_alignment": "expertAlignment",
}


@dataclass(frozen=True)
class Config:
    """One expert-parallel world (core's EpConfig); every rank uses the same one."""

    ranks: int
    experts: int
    top_k: int
    hidden: int
    max_tokens_per_rank: int
    dp_size: int = 1
    input_dtype: str = "bf16"
    dispatch_dtype: str = "bf16"
    layout: str = "masked"
    expert_alignment: int = 1
    # fp8 dispatch's block-scale format (core's scaleFormat) and where combine applies the router
    # weights (core's combineWeights). Plain fields for now: to_c refuses a value other than the
    # default until the library's sy_config carries them.
    scale_format: str = "pow2"
    combine_weights: str = "expert"

    @property
    def local_experts(self) -> int:
        return self.experts // self.ranks

    def to_c(self) -> _abi.SyConfig:
        """The C struct; refuses (ConfigError) values C cannot hold: non-integers, unknown dtypes or layouts."""
        for name, core in FIELDS.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63:
                raise ConfigError(core, f"EpConfig.{core} = {v!r}: must be an integer")
        for name, core, table in (
            ("input_dtype", "inputDtype", DTYPES),
            ("dispatch_dtype", "dispatchDtype", DTYPES),
            ("layout", "layout", LAYOUTS),
        ):
            if getattr(self, name) not in table:
                raise ConfigError(core, f'EpConfig.{core} = "{getattr(self, name)}": must be one of {", ".join(table)}')
        self._check_pending_fields()
        c = _abi.SyConfig()
        c.struct_size = ctypes.sizeof(c)
        for name in FIELDS:
            setattr(c, name, getattr(self, name))
        c.input_dtype = DTYPES[self.input_dtype]
        c.dispatch_dtype = DTYPES[self.dispatch_dtype]
        c.layout = LAYOUTS[self.layout]
        return c

    def _check_pending_fields(self) -> None:
        """ConfigError for an unknown scale_format / combine_weights, or a value other than the
        default while this package's sy_config mirror has no field to carry it."""
        for name, core, allowed, default in (
            ("scale_format", "scaleFormat", SCALE_FORMATS, "pow2"),
            ("combine_weights", "combineWeights", COMBINE_WEIGHTS, "expert"),
        ):
            v = getattr(self, name)
            if v not in allowed:
                raise ConfigError(core, f'EpConfig.{core} = {v!r}: must be one of {", ".join(allowed)}')
            if v != default and name not in dict(_abi.SyConfig._fields_):
                raise ConfigError(
                    core,
                    f'EpConfig.{core} = "{v}": the library does not support it yet (its sy_config has no '
                    f'{name} field); leave {name} at "{default}", or install a library that carries it',
                )


class Region(NamedTuple):
    """One region of a rank's buffers: bytes from the start of its heap, shape in elements."""

    name: str
    offset: int
    bytes: int
    align: int
    dtype: str
    symmetric: bool
    shape: tuple
    axes: tuple


@dataclass(frozen=True)
class Layout:
    """A rank's buffers for one config (core's Layout) and the parameter block the kernels read."""

    config: Config
    regions: dict
    rows: int
    rows_per_source: int
    slots_per_rank: int
    route_words: int
    symmetric_bytes: int
    local_bytes: int
    bytes_per_rank: int
    params: tuple
    param_names: tuple
    report: str

    def describe(self) -> str:
        """The memory report (core's describeLayout): one line per used region, then the totals."""
        return self.report


def compute_layout(config: Config, lib: ctypes.CDLL | None = None) -> Layout:
    """The layout of `config`, or ConfigError with core's field and message."""
    lib = lib or _layout_lib()
    c = config.to_c()
    out = _abi.SyLayout()
    out.struct_size = ctypes.sizeof(out)
    if lib.sy_layout_compute(ctypes.byref(c), ctypes.byref(out)) != 0:
        field = out.error_field.decode() if out.error_field else "(config)"
        raise ConfigError(field, out.error.decode())
    regions = {}
    for i in range(_abi.SY_REGION_COUNT):
        r = out.regions[i]
        name = r.name.decode()
        regions[name] = Region(
            name,
            r.offset,
            r.bytes,
            r.align,
            REGION_DTYPES[r.dtype],
            bool(r.symmetric),
            tuple(r.shape[: r.shape_dims]),
            tuple(a.decode() for a in r.axes[: r.axis_count]),
        )
    need = lib.sy_layout_describe(ctypes.byref(out), None, 0)
    text = ctypes.create_string_buffer(need)
    lib.sy_layout_describe(ctypes.byref(out), text, need)
    names = tuple(lib.sy_layout_param_name(i).decode() for i in range(lib.sy_layout_param_count()))
    return Layout(
        config,
        regions,
        out.rows,
        out.rows_per_source,
        out.slots_per_rank,
        out.route_words,
        out.symmetric_bytes,
        out.local_bytes,
        out.bytes_per_rank,
        tuple(out.params[: out.param_count]),
        names,
        text.value.decode(),
    )


_LIB: ctypes.CDLL | None = None


def _layout_lib() -> ctypes.CDLL:
    global _LIB
    if _LIB is None:
        _LIB = _abi.load("layout")
    return _LIB
