import {
  BackendUnavailableError,
  ConfigError,
  DestroyedError,
  InputError,
  PhaseError,
  ProtocolError,
  SwitchyardError,
  TimeoutError,
  UnsupportedError,
} from "@switchyard/core";
import { NativeError } from "@switchyard/cuda";

/** A worker process (one rank) exited; the session it served is failed. */
export class WorkerExitError extends SwitchyardError {
  override name = "WorkerExitError";
  constructor(
    readonly rank: number,
    readonly exitCode: number | null,
    readonly signal: string | null,
    detail = "",
  ) {
    super(
      `rank ${rank}: worker process exited (${signal ? `signal ${signal}` : `exit code ${exitCode}`})` +
        `${detail ? `: ${detail}` : ""}; the session is failed, destroy it and create a new one`,
    );
  }
}

/** A worker did not answer a request in time (the process is alive but stuck). */
export class WorkerTimeoutError extends SwitchyardError {
  override name = "WorkerTimeoutError";
  constructor(
    readonly rank: number,
    readonly op: string,
    readonly timeoutMs: number,
  ) {
    super(`rank ${rank}: worker did not answer ${op} within ${timeoutMs} ms; the session is failed`);
  }
}

/** An error as it crosses the worker IPC channel. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  fields: Record<string, unknown>;
}

const CLASSES: Record<string, new (...args: never[]) => Error> = {
  SwitchyardError,
  ConfigError,
  InputError,
  PhaseError,
  ProtocolError,
  TimeoutError,
  DestroyedError,
  BackendUnavailableError,
  UnsupportedError,
  NativeError,
  WorkerExitError,
  WorkerTimeoutError,
};

export function serializeError(e: unknown): SerializedError {
  if (e instanceof Error) {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) {
      if (k !== "name" && k !== "message" && k !== "stack") fields[k] = v;
    }
    return { name: e.name, message: e.message, stack: e.stack, fields };
  }
  return { name: "Error", message: String(e), fields: {} };
}

/** Rebuilds an error of the same class (instanceof works), message and fields. */
export function deserializeError(s: SerializedError): Error {
  const Cls = CLASSES[s.name] ?? Error;
  const e = Reflect.construct(Error, [s.message], Cls) as Error & Record<string, unknown>;
  Object.defineProperty(e, "name", { value: s.name, writable: true, enumerable: true, configurable: true });
  Object.assign(e, s.fields);
  if (s.stack) e.stack = s.stack;
  return e;
}
