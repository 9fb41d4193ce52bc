import fc from "fast-check";
import type { Rng } from "../harness/rng.js";

/**
 * One step of a session fuzz run. Ranks are chosen by `pick` modulo what applies, so every op can
 * run in every state and a shrunk sequence stays meaningful.
 * - advance: the next valid call of a rank that may make one (the model knows who may);
 * - finish: valid calls until every rank has completed the step in flight (or one whole step);
 * - badSend: dispatchSend with an edited input (`mutateInput`), in whatever phase the rank is;
 * - badExpertOut: combineSend with an expert output of the wrong type or length;
 * - badRank: any call (stats too, where present) with a rank outside the world;
 * - outOfPhase: a call the rank's phase does not allow, with valid arguments (receive before send,
 *   combine before dispatch, a second send, ...);
 * - badConfig: createSession with an edited config that breaks a rule;
 * - destroy: destroys the session; every later call must be refused with DestroyedError.
 */
export type FuzzOp =
  | { readonly kind: "advance"; readonly pick: number }
  | { readonly kind: "finish" }
  | { readonly kind: "badSend"; readonly pick: number; readonly seed: number }
  | { readonly kind: "badExpertOut"; readonly pick: number; readonly seed: number }
  | { readonly kind: "badRank"; readonly call: number; readonly seed: number }
  | { readonly kind: "outOfPhase"; readonly pick: number; readonly call: number }
  | { readonly kind: "badConfig"; readonly seed: number }
  | { readonly kind: "destroy" };

export function opArb(): fc.Arbitrary<FuzzOp> {
  const pick = fc.nat({ max: 63 });
  const seed = fc.nat();
  return fc.oneof(
    { weight: 10, arbitrary: fc.record({ kind: fc.constant("advance" as const), pick }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("finish" as const) }) },
    { weight: 8, arbitrary: fc.record({ kind: fc.constant("badSend" as const), pick, seed }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("badExpertOut" as const), pick, seed }) },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("badRank" as const), call: fc.nat({ max: 4 }), seed }),
    },
    {
      weight: 6,
      arbitrary: fc.record({ kind: fc.constant("outOfPhase" as const), pick, call: fc.nat({ max: 2 }) }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("badConfig" as const), seed }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("destroy" as const) }) },
  );
}

export function describeOps(ops: readonly FuzzOp[]): string {
  const short: Record<FuzzOp["kind"], string> = {
    advance: "a",
    finish: "F",
    badSend: "S!",
    badExpertOut: "C!",
    badRank: "R!",
    outOfPhase: "P!",
    badConfig: "K!",
    destroy: "D",
  };
  return ops.map((o) => short[o.kind]).join(" ");
}

/** An expert output combineSend must refuse: wrong length, type, or not an array (n = rows * hidden). */
export function badExpertOut(n: number, hidden: number, rng: Rng): { value: unknown; what: string } {
  return rng.pick<() => { value: unknown; what: string }>([
    () => ({ value: new Uint16Array(Math.max(0, n - 1)), what: "one element short" }),
    () => ({ value: new Uint16Array(n + hidden), what: "one row long" }),
    () => ({ value: new Uint16Array(0), what: "empty" }),
    () => ({ value: new Float32Array(n), what: "Float32Array" }),
    () => ({ value: new Int16Array(n), what: "Int16Array" }),
    () => ({ value: new Uint8Array(n * 2), what: "Uint8Array of the same bytes" }),
    () => ({ value: new Array<number>(n).fill(0), what: "a plain array" }),
    () => ({ value: null, what: "null" }),
    () => ({ value: undefined, what: "undefined" }),
  ])();
}
