import { dpGroups, type EpConfig } from "@switchyard/core";
import fc from "fast-check";
import type { PayloadStyle } from "./payload.js";
import { ROUTING_STYLES, type RoutingSpec, type RoutingStyle } from "./routing.js";

/** One DP group's tokens for one step. Every rank of the group passes the same tokens. */
export interface GroupSpec {
  /** T: 0..maxTokensPerRank. */
  readonly tokens: number;
  readonly routing: RoutingSpec;
  readonly payloadSeed: number;
}

/** One step of the world: a spec per DP group; tensors are filled from the seeds (harness/inputs.ts). */
export interface StepSpec {
  readonly groups: readonly GroupSpec[];
  readonly payload: PayloadStyle;
}

/** Token counts: 0, exactly maxTokensPerRank, or anything between. */
export function tokensArb(max: number): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.constant(max) },
    { weight: 4, arbitrary: fc.integer({ min: 0, max }) },
  );
}

/** Routing: one of `styles` (default every ordinary style); no, some or many -1 slots; sometimes a token whose every slot is -1. */
export function routingArb(styles: readonly RoutingStyle[] = ROUTING_STYLES): fc.Arbitrary<RoutingSpec> {
  return fc.record({
    style: fc.constantFrom(...styles),
    unused: fc.constantFrom(0, 0.15, 0.5),
    emptyToken: fc.boolean(),
    seed: fc.nat(),
  });
}

export function groupArb(config: EpConfig, styles?: readonly RoutingStyle[]): fc.Arbitrary<GroupSpec> {
  return fc.record({
    tokens: tokensArb(config.maxTokensPerRank),
    routing: routingArb(styles),
    payloadSeed: fc.nat(),
  });
}

/** One step for `config`, with payloads of one of `styles` and routing of one of `routing` (default every ordinary style). */
export function stepArb(
  config: EpConfig,
  styles: readonly PayloadStyle[],
  routing?: readonly RoutingStyle[],
): fc.Arbitrary<StepSpec> {
  const n = dpGroups(config);
  return fc.record({
    groups: fc.array(groupArb(config, routing), { minLength: n, maxLength: n }),
    payload: fc.constantFrom(...styles),
  });
}

/** A short summary of a step: tokens per group and the routing styles. */
export function describeStep(step: StepSpec): string {
  const groups = step.groups.map(
    (g) =>
      `${g.tokens}t/${g.routing.style}${g.routing.unused ? `-${g.routing.unused}` : ""}${g.routing.emptyToken ? "+empty" : ""}`,
  );
  return `[${groups.join(" ")}] ${step.payload}`;
}
