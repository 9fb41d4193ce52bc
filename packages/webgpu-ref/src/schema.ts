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

export type StageFile =
  | "dispatch_send"
  | "dispatch_write"
  | "receive"
  | "dispatch_recv"
  | "combine_send"
  | "combine_recv"
  | "codec_probe";

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
  // dispatch send, on the source rank: quantise (bf16 -> fp8), route records, masked put and
  // signal, contiguous count announcement.
  quantAmax: k("dispatch_send", "amax", [rw(4, "inbox")]),
  quantEncode: k("dispatch_send", "encode", [rw(4, "inbox")]),
  sendRoute: k("dispatch_send", "route", [rw(2, "work")]),
  sendPut: k("dispatch_send", "put", [ro(3, "work"), ro(5, "inbox"), rw(6, "heap")]),
  sendSignal: k("dispatch_send", "signal", [ro(3, "work"), rw(7, "heap")]),
  sendAnnounce: k("dispatch_send", "announce", [ro(3, "work"), rw(7, "heap")]),
  // the contiguous sender's continuation: counts in, rows at their final positions, records, signal.
  writeCounts: k("dispatch_write", "counts", [rw(2, "work"), rw(7, "heap")]),
  writeArrived: k("dispatch_write", "arrived_all", [rw(2, "work")]),
  writePut: k("dispatch_write", "put", [ro(3, "work"), ro(5, "inbox"), rw(6, "heap")]),
  writeSignal: k("dispatch_write", "signal", [ro(3, "work"), rw(7, "heap")]),
  // reading what arrived (dispatch recv and combine send): signals, records, checks.
  rcvSnapshot: k("receive", "snapshot", [rw(2, "work"), rw(4, "heap")]),
  rcvRoutes: k("receive", "routes", [rw(2, "work"), ro(5, "heap")]),
  rcvClear: k("receive", "clear", [rw(2, "work")]),
  rcvCheck: k("receive", "check", [rw(2, "work")]),
  // dispatch recv, on the receiving rank: fan records out to packed rows, place them in the output.
  recvFan: k("dispatch_recv", "fan", [ro(3, "work"), ro(5, "heap"), rw(8, "outbox")]),
  // placeX: "heap" is the output buffer of x and scales (masked: the local buffer).
  recvPlaceX: k("dispatch_recv", "placeX", [ro(3, "work"), rw(6, "heap"), ro(9, "outbox")]),
  recvPlaceMeta: k("dispatch_recv", "placeMeta", [ro(3, "work"), rw(6, "local"), ro(9, "outbox")]),
  // combine send, on the expert rank: per-group job lists, partials (or home: unweighted rows) home, signal.
  combPlan: k("combine_send", "plan", [rw(2, "work")]),
  combPut: k("combine_send", "put", [ro(3, "work"), ro(6, "expertOut"), rw(7, "heap")]),
  combSignal: k("combine_send", "signal", [ro(3, "work"), rw(4, "heap")]),
  // combine recv, on the home rank: check signals and totals, sum partials in rank order (or
  // home: weighted rows in slot order).
  crecvCheck: k("combine_recv", "check", [rw(2, "work"), rw(4, "heap")]),
  crecvTotal: k("combine_recv", "total", [rw(2, "work")]),
  crecvClear: k("combine_recv", "clear", [rw(6, "outbox")]),
  crecvSum: k("combine_recv", "sum", [ro(3, "work"), ro(5, "heap"), rw(6, "outbox")]),
  crecvSumSlot: k("combine_recv", "sum_slot", [ro(3, "work"), ro(5, "heap"), rw(6, "outbox")]),
  crecvFinish: k("combine_recv", "finish", [ro(3, "work"), rw(6, "outbox")]),
  // codec probe (tests): the WGSL codecs on arrays of values.
  probeFp8Encode: k("codec_probe", "fp8_encode", [rw(2, "data")]),
  probeFp8Decode: k("codec_probe", "fp8_decode", [rw(2, "data")]),
  probeScaleExp: k("codec_probe", "scale_exp", [rw(2, "data")]),
  probeBf16Round: k("codec_probe", "bf16_round", [rw(2, "data")]),
  probeF32Div: k("codec_probe", "f32_div", [rw(2, "data")]),
  probeF32Mul: k("codec_probe", "f32_mul", [rw(2, "data")]),
  probeAmaxScale: k("codec_probe", "amax_scale", [rw(2, "data")]),
  probeFp8EncodeAmax: k("codec_probe", "fp8_encode_amax_probe", [rw(2, "data")]),
} as const satisfies Record<string, KernelSpec>;

export type KernelName = keyof typeof KERNELS;
