import type { ContractCode } from "./entry.js";

/**
 * The statuses every function of the C ABI returns (`sy_status`, include/switchyard_cuda.h). `label`
 * is the enumerator's name, which is also what sy_status_name returns, the Node binding's
 * `err.code` and the Python errors' `status_name`.
 */
export const STATUS_CODES = Object.freeze([
  { value: 0, name: "ok", label: "SY_OK", meaning: "success" },
  {
    value: 1,
    name: "invalidArgument",
    label: "SY_ERR_INVALID_ARGUMENT",
    meaning: "a null handle, a wrong size or count, a misaligned pointer, a bad topk_idx entry",
  },
  { value: 2, name: "cuda", label: "SY_ERR_CUDA", meaning: "a CUDA runtime call failed" },
  { value: 3, name: "nvshmem", label: "SY_ERR_NVSHMEM", meaning: "NVSHMEM could not initialise or allocate" },
  {
    value: 4,
    name: "timeout",
    label: "SY_ERR_TIMEOUT",
    meaning: "a receive stage waited past its timeout: see sy_error_info",
  },
  {
    value: 5,
    name: "protocol",
    label: "SY_ERR_PROTOCOL",
    meaning: "a receive stage found a broken signal: see sy_error_info",
  },
  {
    value: 6,
    name: "unsupported",
    label: "SY_ERR_UNSUPPORTED",
    meaning: "the layout or config is not supported by this build",
  },
  {
    value: 7,
    name: "state",
    label: "SY_ERR_STATE",
    meaning: "the object is in the wrong state (destroyed, not initialised)",
  },
  { value: 8, name: "internal", label: "SY_ERR_INTERNAL", meaning: "a failure the library did not expect" },
  { value: 9, name: "nccl", label: "SY_ERR_NCCL", meaning: "an NCCL call failed (the bench's baseline)" },
  {
    value: 10,
    name: "phase",
    label: "SY_ERR_PHASE",
    meaning: "a phase called out of order (receive before send, combine before dispatch)",
  },
] as const satisfies readonly ContractCode[]);

/** The C ABI's status names ("SY_OK", "SY_ERR_TIMEOUT", ...). */
export type StatusName = (typeof STATUS_CODES)[number]["label"];
