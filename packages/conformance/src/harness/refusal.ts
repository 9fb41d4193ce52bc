import { ConformanceMismatch, errorMessage, errorName } from "./problems.js";

/**
 * Runs `call` (which must fail) and checks the error's `name`. A call that succeeds, or fails
 * with another error, throws a `ConformanceMismatch` saying what was expected and what came.
 * Synchronous throws count as refusals too.
 */
export async function expectRefusal(what: string, expected: string, call: () => unknown): Promise<unknown> {
  let result: unknown;
  try {
    result = await call();
  } catch (e) {
    if (errorName(e) !== expected) {
      throw new ConformanceMismatch(`${what}: expected ${expected}, got ${errorName(e)}: ${errorMessage(e)}`);
    }
    return e;
  }
  void result;
  throw new ConformanceMismatch(`${what}: accepted, expected ${expected}`);
}
