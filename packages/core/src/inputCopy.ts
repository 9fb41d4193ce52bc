import type { EpConfig } from "./config.js";
import { InputError } from "./errors.js";
import { type DispatchInput, validateCombineWeights, validateRank, validateRankInput } from "./tensors.js";

type Ctor = Int32ArrayConstructor | Float32ArrayConstructor | Uint16ArrayConstructor | Uint8ArrayConstructor;

/**
 * %TypedArray%.prototype's own [Symbol.toStringTag] getter: the element type's name for a genuine
 * typed array (a subclass too), undefined for anything else, a Proxy of a typed array included. It
 * reads the object's internal slot, which no subclass or Proxy can redefine.
 */
const typedArrayName = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Int32Array.prototype),
  Symbol.toStringTag,
)!.get! as (this: unknown) => string | undefined;

/**
 * A private copy of `value` if it is a genuine typed array of `ctor`'s element type, made by the
 * base constructor from the source's internal slots (no element getters, `length`, `slice` or
 * species of a subclass run). `value` itself when it is some other thing, for validateRankInput
 * to refuse with its usual message.
 */
function own(rank: number, name: string, value: unknown, ctor: Ctor): unknown {
  if (value === null || typeof value !== "object") return value;
  const tag = typedArrayName.call(value);
  if (tag === undefined) {
    if (value instanceof ctor)
      throw new InputError(
        rank,
        name,
        `is not a genuine ${ctor.name} (a Proxy, or an object with ${ctor.name}'s prototype); pass the typed array itself`,
      );
    return value;
  }
  if (tag !== ctor.name) return value;
  try {
    return new ctor(value as InstanceType<Ctor>);
  } catch (e) {
    throw new InputError(
      rank,
      name,
      `its ArrayBuffer is detached or out of bounds (${(e as Error).message}); pass an array whose buffer was not transferred`,
    );
  }
}

/**
 * Validates a rank input and returns a private copy of it (the arrays copied once, each field read
 * once), with T: backends validate and then use this copy only, so what they checked is what they
 * send, whatever the caller's objects do later (a Proxy or a subclass whose reads or `slice()`
 * disagree, a buffer the caller mutates or detaches meanwhile). Refuses what validateRankInput
 * refuses, and also Proxies and other look-alikes of typed arrays and detached buffers, each with
 * an InputError. With `combineWeights` `home` the input carries no weights (they go to combineRecv).
 */
export function takeRankInput<I extends DispatchInput>(
  config: EpConfig,
  rank: number,
  input: I,
): { input: I; tokens: number } {
  validateRank(config, rank);
  if (input === null || typeof input !== "object")
    throw new InputError(rank, "input", "expected an object { x, topkIdx, topkWeights }");
  const { x, scales, topkIdx, topkWeights } = input;
  const copy = {
    x: own(rank, "x", x, config.inputDtype === "bf16" ? Uint16Array : Uint8Array),
    ...(scales === undefined ? {} : { scales: own(rank, "scales", scales, Float32Array) }),
    topkIdx: own(rank, "topkIdx", topkIdx, Int32Array),
    ...(topkWeights === undefined
      ? {}
      : { topkWeights: own(rank, "topkWeights", topkWeights, Float32Array) }),
  } as unknown as I;
  const tokens = validateRankInput(config, rank, copy);
  return { input: copy, tokens };
}

/**
 * Validates the weights a rank passes to `combineRecv` (`validateCombineWeights`: fp32 [T, topK]
 * with `combineWeights` `home`, none with `expert`) and returns a private copy of them, as
 * `takeRankInput` does for dispatch; undefined with `expert`.
 */
export function takeCombineWeights(
  config: EpConfig,
  rank: number,
  tokens: number,
  weights: unknown,
): Float32Array | undefined {
  return validateCombineWeights(config, rank, tokens, own(rank, "topkWeights", weights, Float32Array));
}
