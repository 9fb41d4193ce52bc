/**
 * Named errors. Every message says what was wrong, where, and what to do about it.
 * Backends throw these (or subclasses) so callers can branch on `error.name` or `instanceof`.
 */
export class SwitchyardError extends Error {
  override name = "SwitchyardError";
}

/**
 * Any value as text for a message, never throwing: JSON where it can be (strings quoted), else
 * a BigInt with its `n`, a Symbol's description, or the object's class. (JSON.stringify throws on
 * BigInts and circular objects, and a Symbol in a template literal throws: a refusal must never
 * turn into a TypeError while its message is built.)
 */
export function describeValue(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "symbol") return value.toString();
  if (typeof value === "number" || value === undefined) return String(value);
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    // circular or otherwise unserialisable: fall through
  }
  return `[${(value as object)?.constructor?.name ?? typeof value}]`;
}

/** A config field broke a rule. Thrown by `validateConfig` before anything is allocated. */
export class ConfigError extends SwitchyardError {
  override name = "ConfigError";
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly rule: string,
  ) {
    super(`EpConfig.${field} = ${describeValue(value)}: ${rule}`);
  }
}

/** A step's input (shape, dtype, index, length) is wrong. Thrown before any data moves. */
export class InputError extends SwitchyardError {
  override name = "InputError";
  constructor(
    readonly rank: number,
    readonly what: string,
    detail: string,
  ) {
    super(`rank ${describeValue(rank)}: ${what}: ${detail}`);
  }
}

/** A phase was called out of order (e.g. combine before dispatch, receive before send). */
export class PhaseError extends SwitchyardError {
  override name = "PhaseError";
  constructor(
    readonly rank: number,
    readonly phase: string,
    detail: string,
  ) {
    super(`rank ${describeValue(rank)}: ${phase} called out of order: ${detail}`);
  }
}

/** A receive stage found a signal that breaks the protocol (missing, too large, or from another step). */
export class ProtocolError extends SwitchyardError {
  override name = "ProtocolError";
  constructor(
    readonly rank: number,
    readonly stage: string,
    readonly region: string,
    detail: string,
    /** The peer whose signal broke the protocol, where one is known. */
    readonly peer?: number,
  ) {
    super(`rank ${rank}, ${stage}, region ${region}: ${detail}`);
  }
}

/** A cross-rank wait ran past its timeout. Names the waiting rank, the peer it waited for and the stage. */
export class TimeoutError extends SwitchyardError {
  override name = "TimeoutError";
  constructor(
    readonly rank: number,
    readonly peer: number,
    readonly stage: string,
    readonly timeoutMs: number,
  ) {
    super(
      `rank ${rank} waited ${timeoutMs} ms in ${stage} for rank ${peer}, which never arrived; ` +
        `check that rank ${peer} is alive and running the same step, or raise the timeout`,
    );
  }
}

/** The session (or object) was destroyed and cannot be used any more. */
export class DestroyedError extends SwitchyardError {
  override name = "DestroyedError";
  constructor(what: string) {
    super(`${what} was destroyed; create a new one`);
  }
}

/** A backend cannot run here (no device, no native build). `reason` says why and what to do. */
export class BackendUnavailableError extends SwitchyardError {
  override name = "BackendUnavailableError";
  constructor(
    readonly backend: string,
    readonly reason: string,
  ) {
    super(`backend ${backend} is unavailable: ${reason}`);
  }
}

/** The config asks for something the backend does not support (a layout, dtype or size). */
export class UnsupportedError extends SwitchyardError {
  override name = "UnsupportedError";
  constructor(
    readonly backend: string,
    detail: string,
  ) {
    super(`backend ${backend} does not support ${detail}`);
  }
}

/** A session would need more memory than the backend can or may allocate. Thrown before allocating. */
export class ResourceError extends SwitchyardError {
  override name = "ResourceError";
  constructor(
    readonly backend: string,
    readonly what: string,
    readonly bytes: number,
    readonly limit: number,
    hint: string,
  ) {
    super(`backend ${backend}: ${what} needs ${bytes} bytes, over the limit of ${limit} bytes; ${hint}`);
  }
}
