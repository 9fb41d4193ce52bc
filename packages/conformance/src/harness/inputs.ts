import { dpGroups, type EpConfig, localExperts, type RankInput, scalesPerRow } from "@switchyard/core";
import { fillBf16, fillFp8, fillScales, fillUe8m0Scales } from "../generators/payload.js";
import { routeTokens } from "../generators/routing.js";
import type { StepSpec } from "../generators/step.js";
import { Rng } from "./rng.js";

/**
 * The rank inputs of one step, filled from the step's seeds. Every rank of a DP group gets the
 * same tokens (as separate copies, so a backend that wrongly writes into one cannot hide it).
 */
export function makeInputs(config: EpConfig, step: StepSpec): RankInput[] {
  const H = config.hidden;
  const inputs: RankInput[] = [];
  for (let g = 0; g < dpGroups(config); g++) {
    const spec = step.groups[g];
    const T = spec.tokens;
    const routeRng = new Rng(spec.routing.seed, 1);
    const route = routeTokens(config.experts, config.topK, T, spec.routing, routeRng, localExperts(config));
    const rng = new Rng(spec.payloadSeed, 2);
    const fp8 = config.inputDtype === "fp8-e4m3";
    const x = fp8 ? fillFp8(T * H, step.payload, rng) : fillBf16(T * H, step.payload, rng);
    const S = T * scalesPerRow(config, "fp8-e4m3");
    // ue8m0 fp8 input must carry powers of two (core's validateRankInput).
    const ue8m0 = config.scaleFormat === "ue8m0";
    const scales = fp8
      ? ue8m0
        ? fillUe8m0Scales(S, step.payload, rng)
        : fillScales(S, step.payload, rng)
      : undefined;
    for (let i = 0; i < config.dpSize; i++) {
      inputs.push({
        x: x.slice(),
        ...(scales ? { scales: scales.slice() } : {}),
        topkIdx: route.topkIdx.slice(),
        topkWeights: route.topkWeights.slice(),
      });
    }
  }
  return inputs;
}

/** Deep copies of inputs, to check later that the backend left the caller's arrays alone. */
export function snapshotInputs(inputs: RankInput[]): RankInput[] {
  return inputs.map((i) => ({
    x: i.x.slice(),
    ...(i.scales ? { scales: i.scales.slice() } : {}),
    topkIdx: i.topkIdx.slice(),
    topkWeights: i.topkWeights.slice(),
  }));
}

function sameBits(a: ArrayBufferView | undefined, b: ArrayBufferView | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** The names of the tensors a backend modified, as "rank r x". */
export function modifiedInputs(inputs: RankInput[], snapshot: RankInput[]): string[] {
  const out: string[] = [];
  inputs.forEach((input, r) => {
    for (const name of ["x", "scales", "topkIdx", "topkWeights"] as const) {
      if (!sameBits(input[name], snapshot[r][name])) out.push(`rank ${r} ${name}`);
    }
  });
  return out;
}

/** Tokens of a (valid) rank input. */
export function tokens(config: EpConfig, input: RankInput): number {
  return input.topkIdx.length / config.topK;
}
