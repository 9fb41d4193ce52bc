"""The protocol's names and codes.
Generated from core's contract (packages/core/src/contract), do not edit.
Regenerate: npx turbo run build --filter=@switchyard/core && npm run contract -w @switchyard/cuda
"""

from __future__ import annotations

# Regions in parameter-block order (sy_error_info.region indexes it).
REGION_NAMES = (
    "dispatchSignal",
    "dispatchX",
    "dispatchScales",
    "dispatchRoutes",
    "countSignal",
    "combineSignal",
    "combineX",
    "recvX",
    "recvScales",
    "recvMeta",
)

# Scalar parameters, in block order.
SCALAR_PARAMS = (
    "ranks",
    "localExperts",
    "maxTokensPerRank",
    "hidden",
    "topK",
    "scalesPerRow",
    "dispatchElemBytes",
    "dpSize",
    "expertAlignment",
    "rowsPerSource",
    "rows",
    "layoutContiguous",
    "quantize",
    "inputFp8",
    "slotsPerRank",
    "routeWords",
    "experts",
    "scaleFormat",
    "combineAtHome",
)

# The parameter block's names in order (sy_layout_param_name).
PARAM_NAMES = (
    "ranks",
    "localExperts",
    "maxTokensPerRank",
    "hidden",
    "topK",
    "scalesPerRow",
    "dispatchElemBytes",
    "dpSize",
    "expertAlignment",
    "rowsPerSource",
    "rows",
    "layoutContiguous",
    "quantize",
    "inputFp8",
    "slotsPerRank",
    "routeWords",
    "experts",
    "scaleFormat",
    "combineAtHome",
    "dispatchSignal.offset",
    "dispatchSignal.bytes",
    "dispatchX.offset",
    "dispatchX.bytes",
    "dispatchScales.offset",
    "dispatchScales.bytes",
    "dispatchRoutes.offset",
    "dispatchRoutes.bytes",
    "countSignal.offset",
    "countSignal.bytes",
    "combineSignal.offset",
    "combineSignal.bytes",
    "combineX.offset",
    "combineX.bytes",
    "recvX.offset",
    "recvX.bytes",
    "recvScales.offset",
    "recvScales.bytes",
    "recvMeta.offset",
    "recvMeta.bytes",
)

# sy_dtype: element types on the wire.
DTYPES = {
    "bf16": 0,
    "fp8-e4m3": 1,
}

# sy_layout_kind: layouts.
LAYOUTS = {
    "masked": 0,
    "contiguous": 1,
}

# sy_scale_format: fp8 block-scale formats.
SCALE_FORMATS = {
    "pow2": 0,
    "amax": 1,
    "ue8m0": 2,
}

# sy_combine_weights: where combine applies the router weights.
COMBINE_WEIGHTS = {
    "expert": 0,
    "home": 1,
}

# sy_region_dtype: element types of regions, by value.
REGION_DTYPES = (
    "u32",
    "i32",
    "f32",
    "bf16",
    "fp8-e4m3",
)

# sy_status values and names (sy_status_name).
STATUS_NAMES = {
    0: "SY_OK",
    1: "SY_ERR_INVALID_ARGUMENT",
    2: "SY_ERR_CUDA",
    3: "SY_ERR_NVSHMEM",
    4: "SY_ERR_TIMEOUT",
    5: "SY_ERR_PROTOCOL",
    6: "SY_ERR_UNSUPPORTED",
    7: "SY_ERR_STATE",
    8: "SY_ERR_INTERNAL",
    9: "SY_ERR_NCCL",
    10: "SY_ERR_PHASE",
}

# sy_error_info.stage: the stage in messages.
STAGES = {
    1: "dispatch recv",
    2: "combine recv",
    3: "dispatch send",
}

# sy_error_info.code: what a stage kernel recorded.
CODES = {
    1: "timeout",
    2: "count too large",
    3: "stale or foreign epoch",
    4: "partials announced != tokens routed",
    5: "aborted",
    6: "bad route record",
    7: "bad input",
}

# sy_error_info.detail1 of a bad route record: what was wrong.
RECORD_FAULTS = {
    1: "its token is outside [0, maxTokensPerRank)",
    2: "its entry count is outside [1, min(topK, localExperts)]",
    3: "an entry's local expert is outside [0, localExperts)",
    4: "an entry's slot is outside [0, topK)",
    5: "an entry's index is at or past its expert's announced count",
    6: "an entry names an (expert, index) row a second time this step",
}

# sy_status values
STATUS_OK = 0  # success
STATUS_INVALID_ARGUMENT = 1  # a null handle, a wrong size or count, a misaligned pointer, a bad topk_idx entry
STATUS_CUDA = 2  # a CUDA runtime call failed
STATUS_NVSHMEM = 3  # NVSHMEM could not initialise or allocate
STATUS_TIMEOUT = 4  # a receive stage waited past its timeout: see sy_error_info
STATUS_PROTOCOL = 5  # a receive stage found a broken signal: see sy_error_info
STATUS_UNSUPPORTED = 6  # the layout or config is not supported by this build
STATUS_STATE = 7  # the object is in the wrong state (destroyed, not initialised)
STATUS_INTERNAL = 8  # a failure the library did not expect
STATUS_NCCL = 9  # an NCCL call failed (the bench's baseline)
STATUS_PHASE = 10  # a phase called out of order (receive before send, combine before dispatch)

# sy_error_info.stage values
STAGE_DISPATCH_RECV = 1  # dispatch receive waits for every source
STAGE_COMBINE_RECV = 2  # combine receive waits for every expert rank
STAGE_DISPATCH_SEND = 3  # contiguous dispatch send waits for every rank's counts

# sy_error_info.code values
CODE_TIMEOUT = 1  # a peer's signal did not arrive in time
CODE_COUNT_TOO_LARGE = 2  # a signal announced more rows than the region holds
CODE_BAD_EPOCH = 3  # a signal carried an epoch that is neither this step's nor the previous one
CODE_COUNT_MISMATCH = 4  # rows or partials announced differ from those routed or written
CODE_ABORTED = 5  # written by the host when the endpoint is destroyed: every wait leaves at once
CODE_BAD_RECORD = 6  # a route record broke the protocol (detail0 = record j, detail1 = its record fault)
CODE_BAD_INPUT = 7  # a topkIdx entry is out of range or repeated; nothing was sent

# route record faults
FAULT_TOKEN = 1  # srcToken outside [0, M)
FAULT_ENTRIES = 2  # n outside [1, J]
FAULT_EXPERT = 3  # a local expert outside [0, L)
FAULT_SLOT = 4  # a slot outside [0, K)
FAULT_INDEX = 5  # an index at or past the expert's announced count
FAULT_TAKEN = 6  # an (expert, index) row an earlier entry of this step already named

# sy_error_info.peer when the error is not about one peer
NO_PEER = 0xFFFFFFFF
