import {
  codeNamed,
  codeOf,
  DEVICE_ERROR_CODES,
  DestroyedError,
  InputError,
  NO_PEER,
  PhaseError,
  ProtocolError,
  REGION_NAMES,
  STAGE_CODES,
  type StatusName,
  SwitchyardError,
  TimeoutError,
  UnsupportedError,
} from "@switchyard/core";
import type { NativeErrorInfo } from "./native/types.js";

/** A CUDA, NVSHMEM or internal failure in the native core; `code` is the C ABI status name. */
export class NativeError extends SwitchyardError {
  override name = "NativeError";
  constructor(
    readonly rank: number,
    readonly code: string,
    detail: string,
  ) {
    super(`rank ${rank}: ${code}: ${detail}`);
  }
}

/** sy_error_info.stage -> the stage in messages ("dispatch recv"), from core's contract. */
export const STAGE_NAMES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(STAGE_CODES.map((s) => [s.value, s.label])),
);

/** What the addon throws: an Error with the C ABI status name and, for receive stages, `info`. */
export interface NativeThrown {
  message: string;
  code?: string;
  info?: NativeErrorInfo;
}

const ABI_PHASES: Record<string, string> = {
  sy_dispatch_send: "dispatchSend",
  sy_dispatch_recv: "dispatchRecv",
  sy_combine_send: "combineSend",
  sy_combine_recv: "combineRecv",
};

/** The session call a native phase-order message is about ("sy_combine_send: ..." -> combineSend). */
function phaseOf(message: string): string {
  const m = /(sy_(?:dispatch|combine)_(?:send|recv)): called out of order/.exec(message);
  return (m && ABI_PHASES[m[1]]) ?? "phase";
}

/** sy_error_info.code of a bad topkIdx entry found on the device (kernels/topk_check.cuh), from core's contract. */
export const BAD_INPUT_CODE = codeNamed(DEVICE_ERROR_CODES, "badInput", "DEVICE_ERROR_CODES").value;

/**
 * The InputError of a bad topkIdx entry found on the device, in core's words for the same entry:
 * info.peer holds the entry's value, detail0 the token, detail1 the slot and (high half) the earlier
 * slot + 1 naming the same expert, 0 when the value is out of range.
 */
export function badInputError(rank: number, info: NativeErrorInfo, experts?: number): InputError {
  const value = info.peer | 0;
  const slot = info.detail1 & 0xffff;
  const earlier = info.detail1 >>> 16;
  const what =
    earlier === 0
      ? `[${info.detail0}][${slot}] = ${value} is outside [-1, ${experts ?? "experts"})`
      : `[${info.detail0}] names expert ${value} twice (slots ${earlier - 1} and ${slot})`;
  const stage = codeOf(STAGE_CODES, info.stage)?.label ?? "send";
  return new InputError(rank, "topkIdx", `${what} (found by ${stage} on the device; the step is lost)`);
}

/**
 * Maps an error thrown by the addon onto core's named errors:
 * SY_ERR_TIMEOUT -> TimeoutError(rank, peer, stage, timeoutMs); SY_ERR_PROTOCOL -> ProtocolError;
 * SY_ERR_INVALID_ARGUMENT -> InputError (a bad topkIdx entry found on the device: core's wording, from `info`); SY_ERR_UNSUPPORTED -> UnsupportedError;
 * SY_ERR_PHASE -> PhaseError; "destroyed" states -> DestroyedError; anything else -> NativeError.
 */
export function mapNativeError(e: unknown, rank: number, timeoutMs: number, experts?: number): Error {
  if (e instanceof SwitchyardError) return e;
  const t = (e ?? {}) as NativeThrown;
  const message = String(t.message ?? e);
  // The C ABI's status name (core's STATUS_CODES labels); one this package does not know maps to NativeError.
  const code = (t.code ?? "SY_ERR_INTERNAL") as StatusName;
  const info = t.info;
  switch (code) {
    case "SY_ERR_TIMEOUT":
      return new TimeoutError(rank, info?.peer ?? -1, STAGE_NAMES[info?.stage ?? 0] ?? "receive", timeoutMs);
    case "SY_ERR_PROTOCOL": {
      const region = info ? (REGION_NAMES[info.region] ?? "?") : "?";
      const detail = message.replace(/^rank \d+, [^,]+, region [^:]+: /, "");
      const peer = info && info.peer !== NO_PEER ? info.peer : undefined;
      return new ProtocolError(rank, STAGE_NAMES[info?.stage ?? 0] ?? "receive", region, detail, peer);
    }
    case "SY_ERR_INVALID_ARGUMENT":
      if (info?.code === BAD_INPUT_CODE) return badInputError(rank, info, experts);
      return new InputError(rank, "argument", message);
    case "SY_ERR_UNSUPPORTED":
      return new UnsupportedError("cuda", message);
    case "SY_ERR_PHASE":
      return new PhaseError(rank, phaseOf(message), message);
    case "SY_ERR_STATE":
      if (/destroyed|freed/.test(message)) return new DestroyedError(`cuda endpoint (rank ${rank})`);
      return new NativeError(rank, code, message);
    default:
      return new NativeError(rank, code, message);
  }
}
