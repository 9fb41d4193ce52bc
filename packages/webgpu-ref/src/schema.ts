/**
 * The one place where kernels meet the host: which WGSL file and entry point each kernel is, its
 * workgroup size, and its bind-group layout. Every kernel has the parameter block at binding 0
 * (uniform) and its per-dispatch `Call` at binding 1 (uniform, dynamic offset); the storage
 * bindings below must match the `@binding(n)` declarations of the stage file.
 */

/** Invocations per workgroup of every kernel. Row kernels run one workgroup per row, its invocations over the row's words. */
export const WORKGROUP_SIZE = 64;
/** Largest workgroup count per dimension WebGPU guarantees; larger grids loop or use a second dimension. */
export const MAX_GROUPS = 65535;

/** Bytes of one `Call` (see common.wgsl); each dispatch gets its own slot in the call ring. */
export const CALL_WORDS = 16;

export type StageFile = "dispatch_send" | "dispatch_recv" | "combine_send" | "combine_recv" | "codec_probe";

/** What a storage binding is bound to; the host picks the concrete buffer (which rank's heap, which window). */
export type Role = "work" | "inbox" | "heap" | "local" | "outbox" | "expertOut" | "data";

export interface StorageBinding {
  binding: number;
  role: Role;
  access: "read" | "read_write";
}

export interface KernelSpec {
  file: StageFile;
  entry: string;
  storage: readonly StorageBinding[];
}

const rw = (binding: number, role: Role): StorageBinding => ({ binding, role, access: "read_write" });
const ro = (binding: number, role: Role): StorageBinding => ({ binding, role, access: "read" });
const k = (file: StageFile, entry: string, storage: StorageBinding[]): KernelSpec => ({
  file,
  entry,
  storage,
});

/** Every kernel, by name. `heap` / `local` bindings are windows (see windows.ts): the Call says which. */
export const KERNELS = {
  // dispatch send, on the source rank: quantise (bf16 -> fp8), plan rows per expert, put rows, signal.
  quantAmax: k("dispatch_send", "amax", [rw(4, "inbox")]),
  quantEncode: k("dispatch_send", "encode", [rw(4, "inbox")]),
  sendCount: k("dispatch_send", "count", [rw(2, "work")]),
  sendAssign: k("dispatch_send", "assign", [rw(2, "work")]),
  sendPut: k("dispatch_send", "put", [ro(3, "work"), ro(5, "inbox"), rw(6, "heap")]),
  sendSignal: k("dispatch_send", "signal", [ro(3, "work"), rw(7, "heap")]),
  // dispatch recv, on the receiving rank: check signals, offsets, delivered list, compact (contiguous), pack for readback.
  recvSnapshot: k("dispatch_recv", "snapshot", [rw(2, "work"), rw(4, "heap")]),
  recvOffsets: k("dispatch_recv", "offsets", [rw(2, "work")]),
  recvDeliver: k("dispatch_recv", "deliver", [rw(2, "work")]),
  recvGather: k("dispatch_recv", "gather", [ro(3, "work"), ro(5, "heap"), rw(6, "local")]),
  recvPack: k("dispatch_recv", "pack", [ro(3, "work"), ro(5, "heap"), rw(8, "outbox")]),
  // combine send, on the expert rank: recheck dispatch signals, row provenance, per-group plan, put rows home, signal.
  combRecheck: k("combine_send", "recheck", [rw(2, "work"), rw(4, "heap")]),
  combRowInfo: k("combine_send", "rowinfo", [rw(2, "work"), ro(5, "heap")]),
  combPlan: k("combine_send", "plan", [rw(2, "work")]),
  combPut: k("combine_send", "put", [ro(3, "work"), ro(6, "expertOut"), rw(7, "heap")]),
  combSignal: k("combine_send", "signal", [ro(3, "work"), rw(4, "heap")]),
  // combine recv, on the home rank: check signals and totals, weighted sum per token.
  crecvCheck: k("combine_recv", "check", [rw(2, "work"), rw(4, "heap")]),
  crecvTotal: k("combine_recv", "total", [rw(2, "work")]),
  crecvSum: k("combine_recv", "sum", [ro(3, "work"), ro(5, "heap"), rw(6, "outbox")]),
  // codec probe (tests): the WGSL codecs on arrays of values.
  probeFp8Encode: k("codec_probe", "fp8_encode", [rw(2, "data")]),
  probeFp8Decode: k("codec_probe", "fp8_decode", [rw(2, "data")]),
  probeScaleExp: k("codec_probe", "scale_exp", [rw(2, "data")]),
  probeBf16Round: k("codec_probe", "bf16_round", [rw(2, "data")]),
} as const satisfies Record<string, KernelSpec>;

export type KernelName = keyof typeof KERNELS;
