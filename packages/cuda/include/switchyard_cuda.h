/*
 * switchyard_cuda.h: the C ABI of Switchyard's CUDA backend (expert-parallel dispatch / combine
 * over NVSHMEM). One process per GPU; every rank of a world makes the same calls.
 *
 * Conventions
 * - Every function returns an int status (SY_OK = 0). Nothing is thrown across this ABI and the
 *   library never exits the process. After a failure, sy_last_error(handle) is a message naming
 *   what failed and where (file:line); pass NULL for calls that made no handle (it also holds the
 *   calling thread's last failure, whatever the handle).
 * - Handles are opaque ids, never the object's address, and an id is never reused in a process:
 *   NULL is SY_ERR_INVALID_ARGUMENT, a handle of another kind too, and a destroyed handle (or any
 *   value this library did not return) is SY_ERR_STATE, also after its memory went to a new
 *   object; destroying one twice is SY_ERR_STATE and never touches another object. Destroying
 *   NULL is SY_OK.
 * - Calls on one handle may come from several threads. Every call holds its object until it
 *   returns; a destroy refuses new calls at once (SY_ERR_STATE), aborts the endpoint's device
 *   waits, then waits up to 10 s for the calls in flight before tearing down. Past that bound the
 *   destroy is refused with SY_ERR_STATE and the handle is live again (destroy it again later).
 * - The phases check their arguments before enqueueing anything: a refused call changes nothing
 *   (no kernel runs, no output is written, the endpoint stays usable). Pointers must be memory of
 *   the endpoint's GPU (device or managed memory; pinned host memory is accepted) and hold the bytes
 *   the call reads or writes: cudaPointerGetAttributes and the allocation's extent tell, outside
 *   graph capture (sy_runtime_options.pointer_checks = 0 leaves only the NULL and alignment checks).
 * - The phases of a step come in order, dispatch send, dispatch recv, combine send, combine recv;
 *   another order is SY_ERR_PHASE. Graph replays are invisible to the host, so once a phase has
 *   been captured into a graph the endpoint stops checking the order.
 * - Streams, graphs and events are CUDA objects passed as void* (cudaStream_t, cudaGraphExec_t, cudaEvent_t).
 * - The four phases only enqueue work on the given stream; none synchronises the host, so a whole
 *   step can be captured into a CUDA graph and replayed. sy_endpoint_check synchronises and
 *   reports a receive stage's timeout (SY_ERR_TIMEOUT) or protocol error (SY_ERR_PROTOCOL).
 * - The library reads no environment variable of its own: every choice is an argument
 *   (sy_runtime_options, sy_endpoint_set_blocks, ...). Command-line tools parse the environment
 *   and pass what they found. (NVSHMEM and CUDA still read theirs, e.g. NVSHMEM_SYMMETRIC_SIZE.)
 * - Exported: exactly the functions marked SY_API (libswitchyard_cuda.so.SY_ABI_VERSION). The bench's
 *   NCCL baseline, random fills and peer-write bandwidth are another library (bench/native,
 *   libswitchyard_cuda_bench.so), not part of this ABI.
 * - Collective calls (all ranks, same order): sy_runtime_create, sy_runtime_destroy,
 *   sy_endpoint_create, sy_endpoint_destroy, sy_barrier.
 */
#ifndef SWITCHYARD_CUDA_H_
#define SWITCHYARD_CUDA_H_

#include <stddef.h>
#include <stdint.h>

#include "switchyard_contract.h"
#include "switchyard_export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SY_UNIQUE_ID_BYTES 128
/* SY_PARAM_COUNT, sy_status (SY_OK = 0, SY_ERR_*) and the codes of sy_error_info (sy_stage,
 * sy_error_code, sy_record_fault) are in switchyard_contract.h, generated from core's contract. */

typedef struct sy_runtime sy_runtime;   /* one per process: NVSHMEM on one GPU */
typedef struct sy_endpoint sy_endpoint; /* one rank's buffers for one config */

/* Its fields' values are sy_stage, sy_error_code and sy_record_fault (switchyard_contract.h).
 * What a stage kernel recorded. stage: 1 dispatch recv, 2 combine recv, 3 dispatch send (the
 * contiguous layout's wait for every rank's counts). code: 1 timeout, 2 count too large, 3 stale or
 * foreign epoch, 4 partials announced != tokens routed (combine recv: by expert rank `peer`,
 * detail0 announced, detail1 expected), 5 aborted (the endpoint was destroyed mid-step), 6 a bad
 * route record (peer = its source, detail0 = record j, detail1 = 1 token, 2 entry count, 3 local
 * expert, 4 slot, 5 index out of range, 6 a row another entry of the step also names), 7 a bad
 * topk_idx entry (stage 3 dispatch send or 2 combine recv; reported as SY_ERR_INVALID_ARGUMENT:
 * peer = the entry's value as int32, region = 0xffffffff, detail0 = the token, detail1 = the slot,
 * plus (the earlier slot naming the same expert + 1) << 16 for a repeat, 0 there for a value outside
 * [-1, experts)). Dispatch recv's code 4: source `peer`'s records name detail0 rows, its counts
 * announce detail1 (rows announced and never written). region: index in core's REGION_NAMES. peer:
 * the rank waited for or at fault (0xffffffff when the error is not about one peer). */
typedef struct sy_error_info {
  uint32_t code, stage, peer, region, detail0, detail1;
} sy_error_info;

typedef struct sy_runtime_info {
  int rank, ranks, device, node_ranks, sm_count;
  int direct_peers; /* PEs the kernels store to (nvshmem_ptr != NULL), self included; the others take puts */
  int gpu_share;    /* PEs of the world on this PE's GPU, self included (several ranks on one GPU) */
} sy_runtime_info;

/* Library */
SY_API const char* sy_version(void);
/* The parameter names in the order the kernels index them, comma-separated (core's PARAM_NAMES). */
SY_API const char* sy_param_names(void);
/* The enumerator's name of a status ("SY_ERR_TIMEOUT"), or NULL for a value that is none of them. */
SY_API const char* sy_status_name(int status);
/* The message of the last failure on `handle` (a sy_runtime* or sy_endpoint*), or of this thread when NULL. */
SY_API const char* sy_last_error(const void* handle);

/* SY_ABI_VERSION of the header the library was built with (its soname's number): a program built
 * against another ABI version must not use this library. */
SY_API int sy_abi_version(void);

/* Choices of a runtime, passed explicitly (versioned: struct_size first). */
typedef enum sy_transport {
  SY_TRANSPORT_AUTO = 0, /* plain stores to peers NVSHMEM maps (NVLink), puts to the others */
  SY_TRANSPORT_PUT = 1   /* puts to every other PE, NVLink ones too: the path other hosts take */
} sy_transport;
typedef struct sy_runtime_options {
  size_t struct_size;        /* sizeof(sy_runtime_options) as the caller compiled it */
  int32_t transport;         /* sy_transport (default SY_TRANSPORT_AUTO) */
  int32_t pointer_checks;    /* 1 (default): phases check that pointers are memory of this GPU, long
                                enough; 0: only NULL and alignment */
  int32_t contiguous_blocks; /* contiguous layout: default grid of its copy kernels (the SM budget),
                                0 = 24; at most the SM count; sy_endpoint_set_blocks overrides it */
  int32_t reserved;          /* ignored: the first version's padding, which its callers may leave undefined */
  int32_t kernel_per_half;   /* masked dispatch and combine (both layouts). 0 (default): each of the
                                four phases launches its stage's own kernel (sy_dispatch / sy_combine
                                one kernel a half); 1: every launch, a stage call's too, runs the
                                half's one kernel function, "dispatch" or "combine", as profilers that
                                expect one kernel a half count them (the masked receives then cost 1
                                to 2 us more). The contiguous dispatch runs its two kernels either way */
} sy_runtime_options;
/* Defaults, struct_size set. */
SY_API void sy_runtime_options_init(sy_runtime_options* options);

/* Bootstrap: rank 0 makes the unique id (before any runtime exists), every rank passes it to create. */
SY_API int sy_get_unique_id(uint8_t out[SY_UNIQUE_ID_BYTES]);
/* sy_runtime_create_with_options with the defaults. */
SY_API int sy_runtime_create(const uint8_t unique_id[SY_UNIQUE_ID_BYTES], int rank, int ranks, int device,
                             sy_runtime** out);
/* options NULL: the defaults. A struct_size this library does not know (smaller than its first
 * field's end, or larger with non-zero bytes it does not know) or a value out of range is
 * SY_ERR_INVALID_ARGUMENT before anything starts. */
SY_API int sy_runtime_create_with_options(const uint8_t unique_id[SY_UNIQUE_ID_BYTES], int rank, int ranks,
                                          int device, const sy_runtime_options* options, sy_runtime** out);
SY_API int sy_runtime_info_get(const sy_runtime* rt, sy_runtime_info* out);
SY_API int sy_runtime_destroy(sy_runtime* rt); /* nvshmem_finalize; SY_ERR_STATE while endpoints of it are alive */
SY_API int sy_barrier(sy_runtime* rt, void* stream); /* stream-ordered barrier over all ranks */

/* Endpoint: params is core's layoutParams(layout) (SY_PARAM_COUNT values), symmetric_bytes is
 * layout.symmetricBytes (the same on every rank). The block must be exactly the layout its scalars
 * give (recomputed with sy_layout_compute, scalars bounded first, no arithmetic that can wrap);
 * anything else is SY_ERR_INVALID_ARGUMENT naming the first parameter that differs. timeout_ns (> 0) bounds every wait of a receive stage.
 * The config may have fewer ranks than the runtime: config rank r is PE r, and PEs >= the config's
 * ranks only join the collective create / destroy (their phases are refused with SY_ERR_STATE). */
SY_API int sy_endpoint_create(sy_runtime* rt, const uint64_t* params, size_t count, uint64_t symmetric_bytes,
                       uint64_t timeout_ns, sy_endpoint** out);
/* Destroy first aborts a step still running on this endpoint: its waits leave at once instead of
 * waiting out their timeouts. */
SY_API int sy_endpoint_destroy(sy_endpoint* ep);
/* Device address and size of a layout region (index in REGION_NAMES) in this rank's heap. */
SY_API int sy_endpoint_region(const sy_endpoint* ep, int region, void** ptr, uint64_t* bytes);
/* Device address of counts [localExperts, ranks] int32, written by dispatch recv. */
SY_API int sy_endpoint_counts(const sy_endpoint* ep, const int32_t** counts);

/* The SM budget of the endpoint's kernels. Contiguous layout: their grid size (default the runtime
 * options' contiguous_blocks or 24, at most the SM count divided by the PEs sharing the GPU; the
 * dispatch send's blocks wait for one another, so its grid stays within one wave whatever the budget).
 * Masked layout: the SMs its grids may use (default and most: one wave, every SM divided by the
 * PEs sharing the GPU); combine recv adds its check blocks. blocks in [1, 65535]. */
SY_API int sy_endpoint_set_blocks(sy_endpoint* ep, int blocks);
/* Device memory the endpoint allocated (symmetric heap, local buffers, tables, scratch) and, of it,
 * the local output buffers (masked: recvX, recvScales, recvMeta; contiguous: recvMeta). */
SY_API int sy_endpoint_memory(const sy_endpoint* ep, uint64_t* device_bytes, uint64_t* local_bytes);

/* The four phases (masked or contiguous layout, from the parameters' layoutContiguous; protocol
 * version 2, docs/protocol.md). Pointers are device addresses; num_tokens <= maxTokensPerRank.
 * x [T, hidden] in the input dtype; scales [T, hidden/128] fp32 for fp8 input, else NULL;
 * topk_idx [T, topK] int32; topk_weights [T, topK] fp32 (dispatch send carries them to the expert
 * ranks in the route records; combine recv does not read them and takes NULL); expert_out
 * [rows, hidden] bf16, row-aligned with recvX (rows: the layout's, or the step's with exact output,
 * below); y [T, hidden] bf16.
 * Output of dispatch recv: recvX / recvScales / recvMeta (sy_endpoint_region). Masked: expert e's
 * rows packed at the front of its block [e * R * M, ...), counts in sy_endpoint_counts. Contiguous:
 * expert blocks padded to expertAlignment, written in place by the senders (symmetric recvX); a
 * padding row's recvMeta is (-1, -1, -1, e), its recvX and recvScales are unspecified.
 * Contiguous dispatch send waits on the device (bounded by timeout_ns, stage 3) until every rank's
 * counts of the step have arrived, so every rank must call it; the host never waits.
 * topk_idx is device memory the host does not read: dispatch send's kernel checks every entry (in
 * [-1, experts), no expert twice in a token) before any store, and refuses a step with a bad one
 * (nothing leaves this rank; sy_endpoint_check then reports SY_ERR_INVALID_ARGUMENT, code 7, naming
 * the token, slot and value; the other ranks time out waiting for this one, and the endpoints must
 * be recreated as after any failed step). Combine recv checks its topk_idx the same way and reads no
 * partial for a bad entry. */
SY_API int sy_dispatch_send(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topk_idx,
                     const float* topk_weights, int num_tokens, void* stream);
SY_API int sy_dispatch_recv(sy_endpoint* ep, void* stream);
SY_API int sy_combine_send(sy_endpoint* ep, const void* expert_out, void* stream);
SY_API int sy_combine_recv(sy_endpoint* ep, const int32_t* topk_idx, const float* topk_weights, int num_tokens, void* y,
                    void* stream);
/* A whole half in one call: sy_dispatch = sy_dispatch_send then sy_dispatch_recv, sy_combine =
 * sy_combine_send then sy_combine_recv, the same arguments, checks, phase order and results. The
 * masked layout runs each half as one kernel launch (the send, then the receive, in every block),
 * the one kernel a profiler sees per half; the contiguous layout launches its two kernels. Use the
 * phases one by one to overlap other work between a send and its receive. */
SY_API int sy_dispatch(sy_endpoint* ep, const void* x, const float* scales, const int32_t* topk_idx,
                       const float* topk_weights, int num_tokens, void* stream);
SY_API int sy_combine(sy_endpoint* ep, const void* expert_out, const int32_t* topk_idx, const float* topk_weights,
                      int num_tokens, void* y, void* stream);
/* Exact-size output (contiguous layout). By default the step's rows stay in the endpoint's symmetric
 * recvX / recvScales (sized for the worst case, where the senders write them). sy_endpoint_set_output(ep, 1),
 * between steps, adds two calls after sy_dispatch_recv:
 *   sy_dispatch_recv_rows(ep, stream, &rows, info) synchronises `stream` and returns the step's rows
 *                                               (padded to expertAlignment per expert), reporting a
 *                                               timeout / protocol error as sy_endpoint_check does;
 *   sy_dispatch_recv_into(ep, x, scales, stream) copies them into x [rows, hidden] (dispatch dtype)
 *                                               and scales [rows, hidden/128] fp32 (fp8, else NULL);
 * then sy_combine_send reads expert_out [rows, hidden]. In protocol version 2 this saves no memory
 * (the senders write into the symmetric recvX, which must hold the worst case); it stays for callers
 * that want exactly sized buffers. A step with exact output cannot be captured into a graph
 * (SY_ERR_UNSUPPORTED); set_output after a captured step is SY_ERR_STATE; within a step
 * SY_ERR_PHASE; on the masked layout SY_ERR_UNSUPPORTED. */
SY_API int sy_endpoint_set_output(sy_endpoint* ep, int exact);
SY_API int sy_dispatch_recv_rows(sy_endpoint* ep, void* stream, uint64_t* rows, sy_error_info* info);
SY_API int sy_dispatch_recv_into(sy_endpoint* ep, void* x, float* scales, void* stream);
/* Synchronises `stream` and reports a recorded timeout / protocol error (filling *info when not NULL). */
SY_API int sy_endpoint_check(sy_endpoint* ep, void* stream, sy_error_info* info);

/* Per-peer counters of the latest step, so a slow or missing rank can be found. Off until
 * sy_endpoint_enable_stats (one small device allocation; the stage kernels then stamp counts and
 * %globaltimer arrival times). Enable before capturing graphs: a captured step keeps what it saw.
 * sy_endpoint_stats synchronises `stream`, then fills each non-NULL array of `ranks` entries (the
 * config's ranks), also after a failed step:
 *   dispatch_sent[p]     route records (rows on the wire) this rank's dispatch send wrote to rank p
 *   dispatch_received[p] route records rank p's dispatchSignal announced to this rank
 *   combine_sent[p]      partials this rank's combine send wrote to home rank p
 *   combine_received[p]  partials expert rank p announced to this rank's combine receive
 *   (with combine_weights home both count tokens, whose (token, slot) rows combine moves)
 *   dispatch_wait_ns[p]  ns from dispatch receive's start until rank p's dispatchSignal arrived
 *   combine_wait_ns[p]   ns from combine receive's start until rank p's signal arrived
 * A peer that never arrived shows the time waited until the receive gave up. */
SY_API int sy_endpoint_enable_stats(sy_endpoint* ep);
SY_API int sy_endpoint_stats(sy_endpoint* ep, void* stream, size_t ranks, uint32_t* dispatch_sent, uint32_t* dispatch_received,
                      uint32_t* combine_sent, uint32_t* combine_received, uint64_t* dispatch_wait_ns,
                      uint64_t* combine_wait_ns);

/* Device memory and CUDA helpers, so a binding needs no other CUDA library. */
SY_API int sy_device_alloc(size_t bytes, void** ptr);
SY_API int sy_device_free(void* ptr);
SY_API int sy_memcpy_to_device(void* dst, const void* src, size_t bytes);
SY_API int sy_memcpy_to_host(void* dst, const void* src, size_t bytes);
SY_API int sy_memset_device(void* dst, int value, size_t bytes);
SY_API int sy_stream_create(void** stream);
SY_API int sy_stream_destroy(void* stream);
SY_API int sy_stream_synchronize(void* stream);
SY_API int sy_graph_begin_capture(void* stream);
SY_API int sy_graph_end_capture(void* stream, void** graph_exec);
SY_API int sy_graph_launch(void* graph_exec, void* stream);
SY_API int sy_graph_destroy(void* graph_exec);
SY_API int sy_event_create(void** event);
SY_API int sy_event_destroy(void* event);
/* external != 0 makes the record a node of a graph being captured on `stream`. */
SY_API int sy_event_record(void* event, void* stream, int external);
SY_API int sy_event_elapsed_ms(void* start, void* end, float* ms);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_CUDA_H_ */
