import type { EpConfig } from "@switchyard/core";
import fc from "fast-check";
import { configArb, describeConfig } from "./config.js";
import type { PayloadStyle } from "./payload.js";
import type { RoutingStyle } from "./routing.js";
import type { ConfigSpace } from "./space.js";
import { describeStep, type StepSpec, stepArb } from "./step.js";

/** A config and the steps one session runs on it. */
export interface WorldCase {
  readonly config: Readonly<EpConfig>;
  readonly steps: readonly StepSpec[];
}

export interface WorldOptions {
  /** Steps per session (default exactly 1). */
  minSteps?: number;
  maxSteps?: number;
  /** Payload styles to draw from (default normal and wide: finite, so sums are defined). */
  payloads?: readonly PayloadStyle[];
  /** Routing styles to draw from (default every ordinary style, `ROUTING_STYLES`). */
  routing?: readonly RoutingStyle[];
  /** The fewest slots a token can have on one rank (configArb's option; default 1). */
  minSlotsPerRank?: number;
}

export const FINITE_PAYLOADS: readonly PayloadStyle[] = ["normal", "wide"];
export const ANY_PAYLOADS: readonly PayloadStyle[] = ["wide", "special"];
/**
 * The fp8 properties' styles, each step's drawn with equal odds: a third of their steps carry
 * blocks on the block-scale rule's boundaries ("edges").
 */
export const FP8_PAYLOADS: readonly PayloadStyle[] = ["wide", "special", "edges"];
/** The scale-format property's styles: half of its steps on the formats' boundaries. */
export const SCALE_FORMAT_PAYLOADS: readonly PayloadStyle[] = ["formats", "formats", "special", "edges"];

/** A config from `space` and 1 or more steps for it. */
export function worldArb(space: ConfigSpace, options: WorldOptions = {}): fc.Arbitrary<WorldCase> {
  const minLength = options.minSteps ?? 1;
  const maxLength = options.maxSteps ?? minLength;
  const payloads = options.payloads ?? FINITE_PAYLOADS;
  return configArb(space, { minSlotsPerRank: options.minSlotsPerRank }).chain((config) =>
    fc.record({
      config: fc.constant(config),
      steps: fc.array(stepArb(config, payloads, options.routing), { minLength, maxLength }),
    }),
  );
}

export function describeWorld(c: WorldCase): string {
  return `${describeConfig(c.config)}; steps ${c.steps.map(describeStep).join(", ")}`;
}
