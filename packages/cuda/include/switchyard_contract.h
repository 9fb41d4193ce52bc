/*
 * switchyard_contract.h: the protocol's names and codes (statuses, wire codes, regions, parameters).
 * Generated from core's contract (packages/core/src/contract), do not edit.
 * Regenerate: npx turbo run build --filter=@switchyard/core && npm run contract -w @switchyard/cuda
 *
 * Included by switchyard_cuda.h and switchyard_layout.h. The X-macro lists (SY_CONTRACT_*) let C
 * and C++ sources build their tables from it: X(value, ID, "label", "meaning") for codes,
 * X(index, ID, "name") for regions and scalar parameters, X(value, NAME, "meaning") for statuses.
 */
#ifndef SWITCHYARD_CONTRACT_H_
#define SWITCHYARD_CONTRACT_H_

/* Values of the parameter block (core's PARAM_NAMES.length). */
#define SY_PARAM_COUNT 39

/* What every function of the C ABI returns (sy_status_name gives the enumerator's name). */
typedef enum sy_status {
  SY_OK = 0,
  SY_ERR_INVALID_ARGUMENT = 1, /* a null handle, a wrong size or count, a misaligned pointer, a bad topk_idx entry */
  SY_ERR_CUDA = 2,             /* a CUDA runtime call failed */
  SY_ERR_NVSHMEM = 3,          /* NVSHMEM could not initialise or allocate */
  SY_ERR_TIMEOUT = 4,          /* a receive stage waited past its timeout: see sy_error_info */
  SY_ERR_PROTOCOL = 5,         /* a receive stage found a broken signal: see sy_error_info */
  SY_ERR_UNSUPPORTED = 6,      /* the layout or config is not supported by this build */
  SY_ERR_STATE = 7,            /* the object is in the wrong state (destroyed, not initialised) */
  SY_ERR_INTERNAL = 8,         /* a failure the library did not expect */
  SY_ERR_NCCL = 9,             /* an NCCL call failed (the bench's baseline) */
  SY_ERR_PHASE = 10            /* a phase called out of order (receive before send, combine before dispatch) */
} sy_status;

/* Element types on the wire (core's Dtype). */
typedef enum sy_dtype {
  SY_DTYPE_BF16 = 0,
  SY_DTYPE_FP8_E4M3 = 1
} sy_dtype;

/* Layouts (core's LayoutKind): masked (low latency) and contiguous (high throughput). */
typedef enum sy_layout_kind {
  SY_LAYOUT_MASKED = 0,
  SY_LAYOUT_CONTIGUOUS = 1
} sy_layout_kind;

/* fp8 block-scale formats (core's ScaleFormat): pow2 and ue8m0 store 2^s in fp32, amax stores amax / 448. */
typedef enum sy_scale_format {
  SY_SCALE_POW2 = 0,
  SY_SCALE_AMAX = 1,
  SY_SCALE_UE8M0 = 2
} sy_scale_format;

/* Where combine applies the router weights (core's CombineWeights): at the expert rank, or at home. */
typedef enum sy_combine_weights {
  SY_COMBINE_WEIGHTS_EXPERT = 0,
  SY_COMBINE_WEIGHTS_HOME = 1
} sy_combine_weights;

/* Element types of regions (core's RegionDtype). */
typedef enum sy_region_dtype {
  SY_REGION_U32 = 0,
  SY_REGION_I32 = 1,
  SY_REGION_F32 = 2,
  SY_REGION_BF16 = 3,
  SY_REGION_FP8_E4M3 = 4
} sy_region_dtype;

/* Regions in the fixed order of the parameter block (core's REGION_NAMES). */
typedef enum sy_region_index {
  SY_REGION_DISPATCH_SIGNAL = 0,
  SY_REGION_DISPATCH_X = 1,
  SY_REGION_DISPATCH_SCALES = 2,
  SY_REGION_DISPATCH_ROUTES = 3,
  SY_REGION_COUNT_SIGNAL = 4,
  SY_REGION_COMBINE_SIGNAL = 5,
  SY_REGION_COMBINE_X = 6,
  SY_REGION_RECV_X = 7,
  SY_REGION_RECV_SCALES = 8,
  SY_REGION_RECV_META = 9,
  SY_REGION_COUNT = 10
} sy_region_index;

/* sy_error_info.stage: the stage whose wait or check failed. */
typedef enum sy_stage {
  SY_STAGE_DISPATCH_RECV = 1, /* dispatch receive waits for every source */
  SY_STAGE_COMBINE_RECV = 2,  /* combine receive waits for every expert rank */
  SY_STAGE_DISPATCH_SEND = 3  /* contiguous dispatch send waits for every rank's counts */
} sy_stage;

/* sy_error_info.code: what a stage kernel recorded (0: nothing). */
typedef enum sy_error_code {
  SY_CODE_NONE = 0,
  SY_CODE_TIMEOUT = 1,         /* a peer's signal did not arrive in time */
  SY_CODE_COUNT_TOO_LARGE = 2, /* a signal announced more rows than the region holds */
  SY_CODE_BAD_EPOCH = 3,       /* a signal carried an epoch that is neither this step's nor the previous one */
  SY_CODE_COUNT_MISMATCH = 4,  /* rows or partials announced differ from those routed or written */
  SY_CODE_ABORTED = 5,         /* written by the host when the endpoint is destroyed: every wait leaves at once */
  SY_CODE_BAD_RECORD = 6,      /* a route record broke the protocol (detail0 = record j, detail1 = its record fault) */
  SY_CODE_BAD_INPUT = 7        /* a topkIdx entry is out of range or repeated; nothing was sent */
} sy_error_code;

/* sy_error_info.detail1 of SY_CODE_BAD_RECORD: what was wrong with the route record. */
typedef enum sy_record_fault {
  SY_FAULT_TOKEN = 1,   /* srcToken outside [0, M) */
  SY_FAULT_ENTRIES = 2, /* n outside [1, J] */
  SY_FAULT_EXPERT = 3,  /* a local expert outside [0, L) */
  SY_FAULT_SLOT = 4,    /* a slot outside [0, K) */
  SY_FAULT_INDEX = 5,   /* an index at or past the expert's announced count */
  SY_FAULT_TAKEN = 6    /* an (expert, index) row an earlier entry of this step already named */
} sy_record_fault;

/* X(value, NAME, meaning) for every sy_status. */
#define SY_CONTRACT_STATUSES(X) \
  X(0, SY_OK, "success") \
  X(1, SY_ERR_INVALID_ARGUMENT, "a null handle, a wrong size or count, a misaligned pointer, a bad topk_idx entry") \
  X(2, SY_ERR_CUDA, "a CUDA runtime call failed") \
  X(3, SY_ERR_NVSHMEM, "NVSHMEM could not initialise or allocate") \
  X(4, SY_ERR_TIMEOUT, "a receive stage waited past its timeout: see sy_error_info") \
  X(5, SY_ERR_PROTOCOL, "a receive stage found a broken signal: see sy_error_info") \
  X(6, SY_ERR_UNSUPPORTED, "the layout or config is not supported by this build") \
  X(7, SY_ERR_STATE, "the object is in the wrong state (destroyed, not initialised)") \
  X(8, SY_ERR_INTERNAL, "a failure the library did not expect") \
  X(9, SY_ERR_NCCL, "an NCCL call failed (the bench's baseline)") \
  X(10, SY_ERR_PHASE, "a phase called out of order (receive before send, combine before dispatch)")

/* X(index, ID, name) for every region, in parameter-block order (core's REGION_NAMES). */
#define SY_CONTRACT_REGIONS(X) \
  X(0, DISPATCH_SIGNAL, "dispatchSignal") \
  X(1, DISPATCH_X, "dispatchX") \
  X(2, DISPATCH_SCALES, "dispatchScales") \
  X(3, DISPATCH_ROUTES, "dispatchRoutes") \
  X(4, COUNT_SIGNAL, "countSignal") \
  X(5, COMBINE_SIGNAL, "combineSignal") \
  X(6, COMBINE_X, "combineX") \
  X(7, RECV_X, "recvX") \
  X(8, RECV_SCALES, "recvScales") \
  X(9, RECV_META, "recvMeta")

/* X(index, ID, name) for every scalar parameter, in block order (core's SCALAR_PARAMS). */
#define SY_CONTRACT_SCALAR_PARAMS(X) \
  X(0, RANKS, "ranks") \
  X(1, LOCAL_EXPERTS, "localExperts") \
  X(2, MAX_TOKENS_PER_RANK, "maxTokensPerRank") \
  X(3, HIDDEN, "hidden") \
  X(4, TOP_K, "topK") \
  X(5, SCALES_PER_ROW, "scalesPerRow") \
  X(6, DISPATCH_ELEM_BYTES, "dispatchElemBytes") \
  X(7, DP_SIZE, "dpSize") \
  X(8, EXPERT_ALIGNMENT, "expertAlignment") \
  X(9, ROWS_PER_SOURCE, "rowsPerSource") \
  X(10, ROWS, "rows") \
  X(11, LAYOUT_CONTIGUOUS, "layoutContiguous") \
  X(12, QUANTIZE, "quantize") \
  X(13, INPUT_FP8, "inputFp8") \
  X(14, SLOTS_PER_RANK, "slotsPerRank") \
  X(15, ROUTE_WORDS, "routeWords") \
  X(16, EXPERTS, "experts") \
  X(17, SCALE_FORMAT, "scaleFormat") \
  X(18, COMBINE_AT_HOME, "combineAtHome")

/* X(value, ID, name) for every region element type. */
#define SY_CONTRACT_REGION_DTYPES(X) \
  X(0, U32, "u32") \
  X(1, I32, "i32") \
  X(2, F32, "f32") \
  X(3, BF16, "bf16") \
  X(4, FP8_E4M3, "fp8-e4m3")

/* X(value, ID, label, meaning) for every stage. */
#define SY_CONTRACT_STAGES(X) \
  X(1, DISPATCH_RECV, "dispatch recv", "dispatch receive waits for every source") \
  X(2, COMBINE_RECV, "combine recv", "combine receive waits for every expert rank") \
  X(3, DISPATCH_SEND, "dispatch send", "contiguous dispatch send waits for every rank's counts")

/* X(value, ID, label, meaning) for every code a stage kernel records. */
#define SY_CONTRACT_ERROR_CODES(X) \
  X(1, TIMEOUT, "timeout", "a peer's signal did not arrive in time") \
  X(2, COUNT_TOO_LARGE, "count too large", "a signal announced more rows than the region holds") \
  X(3, BAD_EPOCH, "stale or foreign epoch", "a signal carried an epoch that is neither this step's nor the previous one") \
  X(4, COUNT_MISMATCH, "partials announced != tokens routed", "rows or partials announced differ from those routed or written") \
  X(5, ABORTED, "aborted", "written by the host when the endpoint is destroyed: every wait leaves at once") \
  X(6, BAD_RECORD, "bad route record", "a route record broke the protocol (detail0 = record j, detail1 = its record fault)") \
  X(7, BAD_INPUT, "bad input", "a topkIdx entry is out of range or repeated; nothing was sent")

/* X(value, ID, label, meaning) for every route record fault (label: the message's words). */
#define SY_CONTRACT_RECORD_FAULTS(X) \
  X(1, TOKEN, "its token is outside [0, maxTokensPerRank)", "srcToken outside [0, M)") \
  X(2, ENTRIES, "its entry count is outside [1, min(topK, localExperts)]", "n outside [1, J]") \
  X(3, EXPERT, "an entry's local expert is outside [0, localExperts)", "a local expert outside [0, L)") \
  X(4, SLOT, "an entry's slot is outside [0, topK)", "a slot outside [0, K)") \
  X(5, INDEX, "an entry's index is at or past its expert's announced count", "an index at or past the expert's announced count") \
  X(6, TAKEN, "an entry names an (expert, index) row a second time this step", "an (expert, index) row an earlier entry of this step already named")

/* The parameter names in block order, comma-separated (core's PARAM_NAMES). */
#define SY_CONTRACT_PARAM_NAMES \
  "ranks,localExperts,maxTokensPerRank,hidden,topK,scalesPerRow,dispatchElemBytes,dpSize," \
  "expertAlignment,rowsPerSource,rows,layoutContiguous,quantize,inputFp8,slotsPerRank," \
  "routeWords,experts,scaleFormat,combineAtHome,dispatchSignal.offset,dispatchSignal.bytes," \
  "dispatchX.offset,dispatchX.bytes,dispatchScales.offset,dispatchScales.bytes," \
  "dispatchRoutes.offset,dispatchRoutes.bytes,countSignal.offset,countSignal.bytes," \
  "combineSignal.offset,combineSignal.bytes,combineX.offset,combineX.bytes,recvX.offset," \
  "recvX.bytes,recvScales.offset,recvScales.bytes,recvMeta.offset,recvMeta.bytes"

#endif /* SWITCHYARD_CONTRACT_H_ */
