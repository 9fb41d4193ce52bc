import { WebGpuError } from "./errors.js";

/** How long opening the device (requestAdapter, requestDevice) may take: 60 s. */
export const OPEN_TIMEOUT_MS = 60_000;

/**
 * `p`, or a WebGpuError of kind "timeout" naming `call` and `what` once `ms` pass first: a promise
 * of the WebGPU implementation (an error scope, a queue drain, an adapter) that never settles
 * turns into an error instead of a hang. The timer never keeps the process alive by itself.
 */
export async function watchdog<T>(p: Promise<T>, ms: number, call: string, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new WebGpuError(
            call,
            "timeout",
            `${what} did not answer within ${ms} ms; the WebGPU implementation is stuck (a hung driver or device): ` +
              "restart the process, or raise the session's timeoutMs if the GPU is merely slow",
          ),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
