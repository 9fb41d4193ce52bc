"""Named errors. A failed C call becomes the subclass named after its status (SY_ERR_TIMEOUT ->
SyTimeoutError), carrying the C ABI's words: `status_name`, the message of sy_last_error (with its
file:line), and for failures a stage kernel recorded sy_error_info's rank, peer, stage, region and
details; a bad topk_idx entry a send kernel refused (code 7) names its token, slot and expert instead."""

from __future__ import annotations

import re

from . import _contract
from ._contract import CODE_BAD_INPUT, CODES, NO_PEER, REGION_NAMES, STAGES, STATUS_NAMES

# The C ABI's tables, generated from core's contract (_contract.py): sy_status values and names
# (the loaded library's sy_status_name is checked against them by the tests), sy_error_info's stage,
# code and region (core's REGION_NAMES), and its peer when the error is not about one peer.
# Code 7 (BAD_INPUT): a send kernel found a bad topk_idx entry before anything was sent (status
# SY_ERR_INVALID_ARGUMENT). peer: the entry (an int32 as uint32); detail0: the token; detail1: the
# slot in the low 16 bits and, for an expert repeated within the token, the earlier slot + 1 above.
BAD_INPUT = CODE_BAD_INPUT


class SwitchyardError(Exception):
    """Base of every error of this package."""


class LibraryNotFoundError(SwitchyardError):
    """libswitchyard_cuda (or the layout library) could not be loaded; the message lists every try."""


class ConfigError(SwitchyardError, ValueError):
    """A config field broke a rule (core's ConfigError: same field names, same message)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class SyError(SwitchyardError):
    """A C call returned a status other than SY_OK."""

    status = -1

    def __init__(
        self, status: int, call: str, message: str, *, rank: int | None = None, info=None, experts: int | None = None
    ):
        self.status = status
        self.status_name = STATUS_NAMES.get(status, f"status {status}")
        self.call = call
        self.rank = rank
        self.stage = self.peer = self.region = self.code = None
        self.detail0 = self.detail1 = None
        self.token = self.slot = self.expert = self.first_slot = None
        if info is not None and (info.code or info.stage):
            self.code = CODES.get(info.code, f"code {info.code}")
            self.stage = STAGES.get(info.stage, f"stage {info.stage}")
            self.region = REGION_NAMES[info.region] if info.region < len(REGION_NAMES) else None
            self.detail0, self.detail1 = int(info.detail0), int(info.detail1)
            if info.code == BAD_INPUT:
                message = self._bad_input(info, message, experts)
            else:
                self.peer = None if info.peer == NO_PEER else int(info.peer)
        where = [f"rank {rank}"] if rank is not None else []
        if self.stage:
            where.append(f"stage {self.stage}")
        if self.peer is not None:
            where.append(f"peer {self.peer}")
        prefix = f"{self.status_name} from {call}" + (f" ({', '.join(where)})" if where else "")
        super().__init__(f"{prefix}: {message}")

    def _bad_input(self, info, message: str, experts: int | None) -> str:
        """Sets token / slot / expert / first_slot of a bad topk_idx entry; returns the library's
        message where it has core's wording already, else core's wording, then the library's message."""
        peer = int(info.peer) & 0xFFFFFFFF
        self.expert = peer - (1 << 32) if peer >= 1 << 31 else peer
        self.token, self.slot = int(info.detail0), int(info.detail1) & 0xFFFF
        first = (int(info.detail1) >> 16) & 0xFFFF
        self.first_slot = first - 1 if first else None
        t, k, v = self.token, self.slot, self.expert
        if self.first_slot is not None:
            said = f"topk_idx[{t}] names expert {v} twice (slots {self.first_slot} and {k})"
        else:
            if experts is None:
                # The library's message carries the config's expert count.
                found = re.search(r"outside \[-1, (\d+)\)", message)
                experts = int(found.group(1)) if found else None
            said = f"topk_idx[{t}][{k}] = {v} is outside [-1, {experts if experts is not None else 'experts'})"
        if not message or said in message:
            return message or said
        return f"{said} ({message})"


class InvalidArgumentError(SyError, ValueError):
    """A refused argument; for a bad topk_idx entry a send kernel found (info.code 7): `token`,
    `slot`, `expert` (the entry) and `first_slot` (the earlier slot naming the same expert, or None
    when the entry is outside [-1, experts)); `peer` is None there."""

    status = _contract.STATUS_INVALID_ARGUMENT


class CudaError(SyError):
    status = _contract.STATUS_CUDA


class NvshmemError(SyError):
    status = _contract.STATUS_NVSHMEM


class SyTimeoutError(SyError, TimeoutError):
    """A receive stage waited past its timeout: `peer` is the rank that never arrived, `stage` where."""

    status = _contract.STATUS_TIMEOUT


class ProtocolError(SyError):
    status = _contract.STATUS_PROTOCOL


class UnsupportedError(SyError):
    status = _contract.STATUS_UNSUPPORTED


class StateError(SyError):
    status = _contract.STATUS_STATE


class InternalError(SyError):
    status = _contract.STATUS_INTERNAL


class NcclError(SyError):
    status = _contract.STATUS_NCCL


class PhaseError(SyError):
    status = _contract.STATUS_PHASE


ERROR_CLASSES = {
    c.status: c
    for c in (
        InvalidArgumentError,
        CudaError,
        NvshmemError,
        SyTimeoutError,
        ProtocolError,
        UnsupportedError,
        StateError,
        InternalError,
        NcclError,
        PhaseError,
    )
}


def error_for(
    status: int, call: str, message: str, *, rank: int | None = None, info=None, experts: int | None = None
) -> SyError:
    """The named error of a status (SyError itself for a status this package does not know).
    `experts`: the config's expert count, for the message of a bad topk_idx entry (info.code 7)."""
    cls = ERROR_CLASSES.get(status, SyError)
    return cls(status, call, message, rank=rank, info=info, experts=experts)
