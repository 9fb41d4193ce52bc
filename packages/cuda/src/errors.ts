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
  STATUS_CODES,
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

/** What the addon throws: an Error with the C ABI status (`code` its name, `status` its value) and, for stage failures, `info`. */
export interface NativeThrown {
  message: string;
  code?: string;
  status?: number;
  info?: NativeErrorInfo;
}

/** What the caller knows of the native call that failed, beside what the addon threw. */
export interface NativeCall {
  /** The endpoint call that failed ("dispatchRecv"): the phase a PhaseError names. */
  readonly call?: string;
  /**
   * The endpoint had been destroyed when the failure came back (a call still in flight when
   * destroy() ran): a state error then reads as DestroyedError.
   */
  readonly destroyed?: boolean;
}

/** sy_error_info.code of a bad topkIdx entry found on the device (kernels/topk_check.cuh), from core's contract. */
export const BAD_INPUT_CODE = codeNamed(DEVICE_ERROR_CODES, "badInput", "DEVICE_ERROR_CODES").value;

/** sy_error_info.code the host writes when the endpoint is destroyed while a step runs, from core's contract. */
export const ABORTED_CODE = codeNamed(DEVICE_ERROR_CODES, "aborted", "DEVICE_ERROR_CODES").value;

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

/** The stage of `info` in messages ("dispatch recv"); "receive" when there is none. */
function stageOf(info: NativeErrorInfo | undefined): string {
  return STAGE_NAMES[info?.stage ?? 0] ?? "receive";
}

/**
 * ProtocolError from sy_error_info: stage, region and peer are its fields. The detail is the native
 * message; where it starts with the words ProtocolError puts first (built from the same fields),
 * they are not repeated.
 */
function protocolError(rank: number, message: string, info: NativeErrorInfo | undefined): ProtocolError {
  const stage = stageOf(info);
  const region = info ? (REGION_NAMES[info.region] ?? "?") : "?";
  const peer = info && info.peer !== NO_PEER ? info.peer : undefined;
  const head = `rank ${rank}, ${stage}, region ${region}: `;
  const detail = message.startsWith(head) ? message.slice(head.length) : message;
  return new ProtocolError(rank, stage, region, detail, peer);
}

/** The C ABI status name of what the addon threw: `code`, else the name of `status` in core's contract. */
function statusOf(t: NativeThrown): string {
  if (typeof t.code === "string") return t.code;
  if (typeof t.status === "number") return codeOf(STATUS_CODES, t.status)?.label ?? "SY_ERR_INTERNAL";
  return "SY_ERR_INTERNAL";
}

/**
 * Maps an error thrown by the addon onto core's named errors, by the C ABI status and the fields of
 * sy_error_info (codes from core's contract); the message text only goes into the new message:
 * - SY_ERR_TIMEOUT -> TimeoutError(rank, info.peer, info.stage, timeoutMs)
 * - SY_ERR_PROTOCOL -> ProtocolError(rank, info.stage, info.region, message, info.peer)
 * - info.code aborted (the endpoint destroyed while a step ran) -> DestroyedError
 * - SY_ERR_INVALID_ARGUMENT -> InputError: a bad topkIdx entry found on the device (info.code
 *   badInput) in core's words, from `info`; any other with the native message
 * - SY_ERR_UNSUPPORTED -> UnsupportedError
 * - SY_ERR_PHASE -> PhaseError naming `call.call` (the endpoint call that was refused)
 * - SY_ERR_STATE -> DestroyedError when `call.destroyed` says the endpoint was destroyed, else NativeError
 * - anything else -> NativeError with the status name
 */
export function mapNativeError(
  e: unknown,
  rank: number,
  timeoutMs: number,
  experts?: number,
  call: NativeCall = {},
): Error {
  if (e instanceof SwitchyardError) return e;
  const t = (e ?? {}) as NativeThrown;
  const message = String(t.message ?? e);
  const code = statusOf(t);
  const info = t.info;
  if (info?.code === ABORTED_CODE) return new DestroyedError(`cuda endpoint (rank ${rank})`);
  switch (code) {
    case "SY_ERR_TIMEOUT":
      return new TimeoutError(rank, info?.peer ?? -1, stageOf(info), timeoutMs);
    case "SY_ERR_PROTOCOL":
      return protocolError(rank, message, info);
    case "SY_ERR_INVALID_ARGUMENT":
      if (info?.code === BAD_INPUT_CODE) return badInputError(rank, info, experts);
      return new InputError(rank, "argument", message);
    case "SY_ERR_UNSUPPORTED":
      return new UnsupportedError("cuda", message);
    case "SY_ERR_PHASE":
      return new PhaseError(rank, call.call ?? "phase", message);
    case "SY_ERR_STATE":
      if (call.destroyed === true) return new DestroyedError(`cuda endpoint (rank ${rank})`);
      return new NativeError(rank, code, message);
    default:
      return new NativeError(rank, code, message);
  }
}
