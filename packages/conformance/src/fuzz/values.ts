import type { Rng } from "../harness/rng.js";

/** Every typed-array class (and plain Array), for "the wrong dtype". */
export const ARRAY_CLASSES: readonly (new (n: number) => ArrayLike<number>)[] = [
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  Array,
];

/** An object that refers to itself (JSON.stringify throws on it). */
function circular(): object {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
}

/**
 * Values no field expects, picked by `rng`: zero, negatives, fractions, NaN, infinities, huge
 * numbers, numeric strings, null, undefined, booleans, objects, arrays, a BigInt, a Symbol, a
 * circular object. Messages must still be built from them (no TypeError while reporting).
 */
export function oddValue(rng: Rng): unknown {
  const pool: (() => unknown)[] = [
    () => 0,
    () => -1,
    () => 1.5,
    () => Number.NaN,
    () => Number.POSITIVE_INFINITY,
    () => Number.NEGATIVE_INFINITY,
    () => 2 ** 31,
    () => 2 ** 53 + 2,
    () => "4",
    () => "",
    () => null,
    () => undefined,
    () => true,
    () => ({}),
    () => [2],
    () => BigInt(2),
    () => Symbol("odd"),
    circular,
  ];
  return rng.pick(pool)();
}

/** Ranks outside a world of `ranks` (never -0, which is rank 0). */
export function badRank(ranks: number, rng: Rng): unknown {
  return rng.pick<() => unknown>([
    () => ranks,
    () => ranks + 1,
    () => -1,
    () => 0.5,
    () => Number.NaN,
    () => Number.POSITIVE_INFINITY,
    () => "0",
    () => null,
    () => undefined,
    () => 2 ** 32,
    () => BigInt(0),
    () => Symbol("rank"),
  ])();
}

/** A short, safe description of any value for messages. */
export function show(v: unknown): string {
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "symbol") return v.toString();
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${(v as unknown as ArrayLike<number>).length})`;
  if (Array.isArray(v)) return `Array(${v.length})`;
  return typeof v === "object" ? `object{${Object.keys(v).join(",")}}` : typeof v;
}

/** Deep copies of the arrays reachable from `v` (one level into objects), to check later that nothing wrote into them. */
export function snapshot(v: unknown): () => string[] {
  const taken: { path: string; arr: ArrayLike<number> | unknown[]; copy: number[] | unknown[] }[] = [];
  const take = (path: string, a: unknown) => {
    if (ArrayBuffer.isView(a) && !(a instanceof DataView)) {
      const arr = a as unknown as ArrayLike<number>;
      taken.push({ path, arr, copy: Array.from(arr) });
    } else if (Array.isArray(a)) taken.push({ path, arr: a, copy: a.slice() });
  };
  take("(argument)", v);
  if (v !== null && typeof v === "object" && !ArrayBuffer.isView(v) && !Array.isArray(v)) {
    for (const k of Object.keys(v)) take(k, (v as Record<string, unknown>)[k]);
  }
  return () =>
    taken
      .filter(({ arr, copy }) => arr.length !== copy.length || copy.some((x, i) => !Object.is(x, arr[i])))
      .map(({ path }) => path);
}
